//===- OnnxMatMulNBits.cpp - com.microsoft MatMulNBits (block-quantized GEMM) ===//
//
// onnxruntime's weight-only quantized GEMM, which onnxruntime-genai's model
// builder (and onnxruntime's matmul_nbits_quantizer) writes for every linear
// layer of 4-bit Llama/Phi/Qwen exports. Semantics follow onnxruntime's
// docs/ContribOperators.md and its CPU kernel (checked against onnxruntime
// 1.30 on CPU, test/onnx/gen_onnx_tests.py):
//
//   Y[..., n] = sum_k A[..., k] W[k, n] (+ bias[n])
//   W[k, n]   = (q[n, k] - zp[n, k / block_size]) * scale[n, k / block_size]
//
// with q the `bits`-bit codes of B [N, k_blocks, blob_size], packed low bits
// first along K, k_blocks = ceil(K / block_size) (the last block is padded)
// and blob_size = block_size * bits / 8.
//
// kiln has no quantized GEMM: the weight is dequantized here, at import, into
// a constant W [K, N] of A's element type (float32 arithmetic, one rounding),
// and the node becomes the IR a MatMul (+ Add of the bias) gives, so every
// GEMM path (tensor cores, the few-row decode GEMM, epilogue fusion) runs it.
// This trades the 4x smaller weight for a 16-bit one in the artifact and in
// HBM; B, scales and zero_points must therefore be constants after shape
// specialization.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"
#include "dialects/kiln/FloatBits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Most elements of a weight MatMulNBits dequantizes at import (8 GiB as fp32; the largest real
/// weights, vocab x hidden of 70B-class models, have about 2^30).
constexpr int64_t kMaxDequantizedElements = int64_t(1) << 31;

/// Largest block_size accepted: far above any real one (onnxruntime's
/// quantizers write 16 to 256), small enough that block_size * bits cannot
/// overflow.
constexpr int64_t kMaxBlockSize = int64_t(1) << 30;

/// Operand slots of MatMulNBits (version 1).
enum : unsigned { kA = 0, kB, kScales, kZeroPoints, kGIdx, kBias };

/// The attributes and the derived sizes of one MatMulNBits node.
struct NBitsShape {
  int64_t k, n, bits, blockSize;
  int64_t kBlocks;  ///< ceil(K / block_size)
  int64_t blobSize; ///< bytes per block: block_size * bits / 8
  /// Bytes of packed zero points per column n: ceil(k_blocks * bits / 8).
  int64_t packedZeroPointBytes() const { return llvm::divideCeil(kBlocks * bits, 8); }
};

/// Required INT attribute `name`, else "attribute '<name>' is required".
FailureOr<int64_t> getRequiredIntAttr(NodeImporter &n, StringRef name) {
  if (!n.findAttr(name))
    return n.emitError() << "attribute '" << name << "' is required";
  return n.getIntAttr(name, 0);
}

/// Reads and checks K, N, bits (2, 4 or 8: the widths onnxruntime's kernels
/// unpack) and block_size (a power of 2, at least 16).
FailureOr<NBitsShape> getNBitsShape(NodeImporter &n) {
  FailureOr<int64_t> k = getRequiredIntAttr(n, "K"), nDim = getRequiredIntAttr(n, "N"),
                     blockSize = getRequiredIntAttr(n, "block_size");
  FailureOr<int64_t> bits = n.getIntAttr("bits", 4);
  if (failed(k) || failed(nDim) || failed(blockSize) || failed(bits) ||
      failed(n.getIntAttr("accuracy_level", 0)))
    return failure();
  if (*bits != 2 && *bits != 4 && *bits != 8)
    return n.emitError() << "unsupported: bits " << *bits
                         << " (kiln imports 2-, 4- and 8-bit weights, as onnxruntime does)";
  if (*blockSize < 16 || *blockSize > kMaxBlockSize || !llvm::isPowerOf2_64(*blockSize))
    return n.emitError() << "block_size " << *blockSize << " must be a power of 2 from 16 to "
                         << kMaxBlockSize;
  if (*k <= 0 || *nDim <= 0 || !checkedElementCount({*k, *nDim}))
    return n.emitError() << "K " << *k << " and N " << *nDim << " must be positive (W is [K, N])";
  const int64_t kBlocks = static_cast<int64_t>(llvm::divideCeil(*k, *blockSize));
  NBitsShape s{*k, *nDim, *bits, *blockSize, kBlocks, *blockSize * *bits / 8};
  return s;
}

/// True if `t` has shape [rows * cols] or [rows, cols].
bool isFlatOrMatrix(RankedTensorType t, int64_t rows, int64_t cols) {
  return t.getShape() == ArrayRef<int64_t>{rows * cols} ||
         t.getShape() == ArrayRef<int64_t>{rows, cols};
}

/// The elements of the float constant `attr` (f32, f16 or bf16) as float32.
std::vector<float> toFloats(DenseElementsAttr attr) {
  Type elem = attr.getElementType();
  int64_t count = attr.getNumElements();
  if (elem.isF32())
    return std::vector<float>(attr.getValues<float>().begin(), attr.getValues<float>().end());
  assert((elem.isF16() || elem.isBF16()) && "float constant of an unexpected type");
  auto convert = elem.isF16() ? fromF16Bits : fromBF16Bits;
  ArrayRef<char> raw = attr.getRawData();
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, raw.data() + (attr.isSplat() ? 0 : 2 * i), 2);
    values[i] = convert(bits);
  }
  return values;
}

/// The bytes of the uint8 constant `attr`, splats expanded.
std::vector<uint8_t> toBytes(DenseElementsAttr attr) {
  return std::vector<uint8_t>(attr.getValues<uint8_t>().begin(), attr.getValues<uint8_t>().end());
}

/// Code `i` of a row of `bits`-bit codes packed low bits first.
inline uint8_t unpackCode(const uint8_t *row, int64_t i, int64_t bits) {
  int64_t bit = i * bits;
  return uint8_t((row[bit / 8] >> (bit % 8)) & ((1u << bits) - 1));
}

/// The constant operand `i` (named `what`) checked to have A's element type
/// and shape [N * k_blocks] or [N, k_blocks], as float32.
FailureOr<std::vector<float>> getPerBlockFloats(NodeImporter &n, unsigned i, StringRef what,
                                                const NBitsShape &s) {
  RankedTensorType t = n.getInputType(i), aType = n.getInputType(kA);
  if (t.getElementType() != aType.getElementType())
    return n.emitError() << what << " " << t << " must have the element type of A " << aType;
  if (!isFlatOrMatrix(t, s.n, s.kBlocks))
    return n.emitError() << what << " " << t << " must have shape [N * k_blocks] = ["
                         << s.n * s.kBlocks << "] or [N, k_blocks] = [" << s.n << ", " << s.kBlocks
                         << "] (N = " << s.n << ", K = " << s.k << ", block_size = " << s.blockSize
                         << ")";
  FailureOr<DenseElementsAttr> value = n.getConstantInput(i, what);
  if (failed(value))
    return failure();
  return toFloats(*value);
}

/// The zero point of every block, [N * k_blocks] in float32: unpacked from
/// uint8 codes ([N * ceil(k_blocks * bits / 8)] or [N, ceil(...)]), given in
/// A's element type (one per block), or 2^(bits - 1) when absent.
FailureOr<std::vector<float>> getZeroPoints(NodeImporter &n, const NBitsShape &s) {
  if (!n.hasInput(kZeroPoints))
    return std::vector<float>(s.n * s.kBlocks, float(1 << (s.bits - 1)));
  RankedTensorType t = n.getInputType(kZeroPoints);
  if (isa<FloatType>(t.getElementType()))
    return getPerBlockFloats(n, kZeroPoints, "zero_points", s);
  if (!t.getElementType().isUnsignedInteger(8))
    return n.emitError() << "zero_points " << t
                         << " must be uint8 (packed) or of the element type of A "
                         << n.getInputType(kA) << " (one per block)";
  int64_t rowBytes = s.packedZeroPointBytes();
  if (!isFlatOrMatrix(t, s.n, rowBytes))
    return n.emitError() << "zero_points " << t
                         << " must have shape [N * ceil(k_blocks * bits / 8)] = [" << s.n * rowBytes
                         << "] or [N, ceil(k_blocks * bits / 8)] = [" << s.n << ", " << rowBytes
                         << "] (N = " << s.n << ", K = " << s.k << ", block_size = " << s.blockSize
                         << ", bits = " << s.bits << ")";
  FailureOr<DenseElementsAttr> value = n.getConstantInput(kZeroPoints, "zero_points");
  if (failed(value))
    return failure();
  std::vector<uint8_t> packed = toBytes(*value);
  std::vector<float> zeroPoints(s.n * s.kBlocks);
  for (int64_t col = 0; col < s.n; ++col)
    for (int64_t blk = 0; blk < s.kBlocks; ++blk)
      zeroPoints[col * s.kBlocks + blk] = unpackCode(&packed[col * rowBytes], blk, s.bits);
  return zeroPoints;
}

/// W [K, N] = (q - zp) * scale in float32, stored in `elementType` (f32, or
/// f16/bf16 rounded to nearest even once), as a DenseElementsAttr.
DenseElementsAttr dequantize(const NBitsShape &s, ArrayRef<uint8_t> b, ArrayRef<float> scales,
                             ArrayRef<float> zeroPoints, Type elementType) {
  auto type = getTensorType({s.k, s.n}, elementType);
  int64_t rowBytes = s.kBlocks * s.blobSize;
  auto weight = [&](int64_t k, int64_t col) {
    int64_t blk = k / s.blockSize, i = col * s.kBlocks + blk;
    float q = unpackCode(&b[col * rowBytes], k, s.bits);
    return (q - zeroPoints[i]) * scales[i];
  };
  if (elementType.isF32()) {
    std::vector<float> w(s.k * s.n);
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t col = 0; col < s.n; ++col)
        w[k * s.n + col] = weight(k, col);
    return DenseElementsAttr::get(type, ArrayRef<float>(w));
  }
  auto convert = elementType.isF16() ? toF16Bits : toBF16Bits;
  std::vector<uint16_t> w(s.k * s.n);
  for (int64_t k = 0; k < s.k; ++k)
    for (int64_t col = 0; col < s.n; ++col)
      w[k * s.n + col] = convert(weight(k, col));
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(w.data()), w.size() * 2));
}

/// com.microsoft MatMulNBits (version 1).
///   inputs:  A [..., K] (f32, f16 or bf16); B uint8 [N, k_blocks, blob_size];
///            scales [N * k_blocks] or [N, k_blocks] of A's type;
///            zero_points (optional): uint8 packed like B per column,
///            [N * ceil(k_blocks * bits / 8)] or [N, ceil(...)], or A's type
///            unpacked, one per block (default 2^(bits - 1));
///            g_idx (optional, refused); bias [N] (optional, A's type).
///   outputs: Y [..., N] = A W (+ bias): a kiln.matmul with the dequantized
///            constant W [K, N] (+ a kiln.add of the bias).
///   attributes: K, N, block_size (required), bits (default 4; 2, 4 or 8),
///            accuracy_level (ignored: kiln accumulates in fp32).
/// Errors: as the checks below; each names the operand, its type and the
/// shape K, N, block_size and bits require.
LogicalResult importMatMulNBits(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 6)) || failed(n.checkFloat(kA, "A")))
    return failure();
  FailureOr<NBitsShape> s = getNBitsShape(n);
  if (failed(s))
    return failure();
  // The dequantized W is a constant of N x K floats: refuse sizes no real weight has before
  // reading (or materializing) B, instead of running out of memory.
  if (s->k > 0 && s->n > kMaxDequantizedElements / s->k)
    return n.emitError() << "unsupported: dequantizing the N x K = " << s->n << " x " << s->k
                         << " weight at import would make more than " << kMaxDequantizedElements
                         << " elements (2^31), the most kiln dequantizes for MatMulNBits";
  RankedTensorType aType = n.getInputType(kA);
  if (aType.getRank() == 0 || aType.getShape().back() != s->k)
    return n.emitError() << "A " << aType << " must have K = " << s->k << " as its last dim";
  if (n.hasInput(kGIdx))
    return n.emitUnsupported("g_idx (input 4, the deprecated per-row block index of act-order "
                             "GPTQ exports); quantize without act-order or export without g_idx");

  // 1. The packed codes: uint8 [N, k_blocks, blob_size].
  RankedTensorType bType = n.getInputType(kB);
  if (!bType.getElementType().isUnsignedInteger(8))
    return n.emitError() << "B " << bType << " must be uint8";
  if (bType.getShape() != ArrayRef<int64_t>{s->n, s->kBlocks, s->blobSize})
    return n.emitError() << "B " << bType << " must have shape [N, k_blocks, blob_size] = [" << s->n
                         << ", " << s->kBlocks << ", " << s->blobSize << "] (N = " << s->n
                         << ", K = " << s->k << ", block_size = " << s->blockSize
                         << ", bits = " << s->bits << ")";
  // 2. Scales and zero points per block, and the bias's type and shape, all
  //    checked before the constant B is read.
  Value bias = n.getInput(kBias);
  if (bias) {
    RankedTensorType t = n.getInputType(kBias);
    if (t.getElementType() != aType.getElementType() || t.getShape() != ArrayRef<int64_t>{s->n})
      return n.emitError() << "bias " << t << " must have shape [N] = [" << s->n
                           << "] and the element type of A " << aType;
  }
  FailureOr<std::vector<float>> scales = getPerBlockFloats(n, kScales, "scales", *s);
  if (failed(scales))
    return failure();
  FailureOr<std::vector<float>> zeroPoints = getZeroPoints(n, *s);
  if (failed(zeroPoints))
    return failure();
  FailureOr<DenseElementsAttr> b = n.getConstantInput(kB, "B");
  if (failed(b))
    return failure();

  // 3. W [K, N] as a constant, then the MatMul's IR: a rank-1 A is [1, K].
  Value w =
      n.createConstant(dequantize(*s, toBytes(*b), *scales, *zeroPoints, aType.getElementType()));
  Value a = n.getInput(kA);
  if (aType.getRank() == 1)
    a = n.createReshape(a, {1, s->k});
  auto lhsType = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> shape(lhsType.getShape());
  shape.back() = s->n;
  Value y = n.create<MatMulOp>(lhsType.clone(shape), a, w);
  if (aType.getRank() == 1)
    y = n.createReshape(y, {s->n});
  if (bias)
    y = n.create<AddOp>(y.getType(), y, bias);
  n.setResult(0, y);
  return success();
}

} // namespace

/// Registers com.microsoft MatMulNBits.
void onnx_import::registerMatMulNBits(OpRegistry &microsoftDomain) {
  microsoftDomain.add("MatMulNBits", importMatMulNBits,
                      {"K", "N", "bits", "block_size", "accuracy_level"});
}
