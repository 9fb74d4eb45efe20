//===- KernelEmitter.cpp - emitter dispatch and shared helpers ------------===//
//
// Selects the emitter of each kernel and implements the helpers every
// emitter uses (types, literals, signatures).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmitter.h"

#include "dialects/kiln/KilnTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

bool kiln::codegen::insertGridDependencySync(GeneratedKernel &kernel, bool triggerEarly) {
  const char *call =
      triggerEarly ? "kiln::gridDependencySync();" : "kiln::gridDependencyWait();";
  if (size_t at = kernel.source.find(kGridDependencyPlaceholder); at != std::string::npos) {
    kernel.source.replace(at, std::strlen(kGridDependencyPlaceholder), call);
    kernel.programmaticLaunch = true;
    return true;
  }
  size_t name = kernel.source.find(kKernelNamePlaceholder);
  size_t brace = name == std::string::npos ? name : kernel.source.find('{', name);
  if (brace == std::string::npos)
    return false;
  kernel.source.insert(brace + 1, triggerEarly ? "\n  kiln::gridDependencySync();"
                                               : "\n  kiln::gridDependencyWait();");
  kernel.programmaticLaunch = true;
  return true;
}

FailureOr<GeneratedKernel> EmitterRegistry::emit(KernelOp kernel) const {
  Operation *anchor = nullptr;
  for (Operation &op : kernel.getBodyBlock().without_terminator()) {
    // kiln.row_stats is computed by the GEMM whose lhs it reads (kiln-fuse-norm-into-gemm).
    if (op.hasTrait<KilnFusible>() || isa<RowStatsOp>(op))
      continue;
    // A KV cache append whose pools a paged attention of the kernel reads is that attention's
    // (kiln-fuse-kv-append); the attention's emitter writes both.
    if (auto append = dyn_cast<KvCacheAppendOp>(op))
      if (llvm::any_of(append.getKeyResult().getUsers(),
                       [](Operation *u) { return isa<PagedAttentionOp>(u); }))
        continue;
    if (anchor)
      return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                                << " holds two non-fusible ops ("
                                << anchor->getName() << ", " << op.getName() << ")";
    anchor = &op;
  }
  if (!anchor)
    return pointwise(kernel, nullptr);
  auto it = anchors.find(anchor->getName().getTypeID());
  if (it == anchors.end()) {
    InFlightDiagnostic diag = kernel.emitError()
                              << "unsupported: no CUDA emitter for " << anchor->getName()
                              << " in kernel @" << kernel.getSymName();
    // Range and CumSum run only at compile time: on constants, folded up to
    // the folding limit. Say which of the two conditions failed.
    if (isa<RangeOp, CumSumOp>(anchor)) {
      auto type = cast<RankedTensorType>(anchor->getResult(0).getType());
      bool constantInputs = llvm::all_of(anchor->getOperands(), [&](Value v) {
        if (auto arg = dyn_cast<BlockArgument>(v)) // a kernel operand
          v = kernel.getInputs()[arg.getArgNumber()];
        return v.getDefiningOp() && v.getDefiningOp()->hasTrait<OpTrait::ConstantLike>();
      });
      if (constantInputs)
        diag << "; its " << type.getNumElements() << "-element result exceeds the "
             << kMaxFoldElements << "-element limit of compile-time folding (use a smaller "
             << "--shape)";
      else
        diag << "; kiln evaluates " << anchor->getName()
             << " only at compile time, on inputs that fold to constants (values over "
             << kMaxFoldElements << " elements are not folded)";
    }
    return diag;
  }
  if (kernel.getBodyBlock().getOperations().size() != 2 && !it->second.acceptsFusedOps)
    return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                              << " fuses other ops with " << anchor->getName();
  return it->second.emit(kernel, anchor);
}

EmitterRegistry kiln::codegen::makeDefaultEmitterRegistry() {
  EmitterRegistry registry;
  populatePointwiseEmitter(registry);
  populateGemmEmitters(registry);
  populateNormEmitters(registry);
  populateReduceEmitters(registry);
  populateSampleEmitters(registry);
  populateAttentionEmitters(registry);
  populateDecodeAttentionEmitters(registry);
  return registry;
}

FailureOr<std::string> kiln::codegen::cudaScalarType(Type t) {
  if (t.isF32() || isNarrowFloat(t))
    return std::string("float");
  return cudaStorageType(t);
}

bool kiln::codegen::isNarrowFloat(Type t) { return t.isF16() || t.isBF16(); }

std::string kiln::codegen::storeValue(Type t, const std::string &value) {
  if (t.isF16())
    return "kiln::cvt<kiln::f16>(" + value + ")";
  if (t.isBF16())
    return "kiln::cvt<kiln::bf16>(" + value + ")";
  return value;
}

std::string kiln::codegen::loadValue(Type t, const std::string &load) {
  return isNarrowFloat(t) ? "kiln::ld(" + load + ")" : load;
}

FailureOr<std::string> kiln::codegen::cudaStorageType(Type t) {
  if (t.isF32())
    return std::string("float");
  if (t.isF16())
    return std::string("kiln::f16");
  if (t.isBF16())
    return std::string("kiln::bf16");
  if (t.isInteger(1))
    return std::string("bool");
  if (auto it = dyn_cast<IntegerType>(t)) {
    bool u = it.isUnsigned();
    switch (it.getWidth()) {
    case 64:
      return std::string(u ? "unsigned long long" : "long long");
    case 32:
      return std::string(u ? "unsigned" : "int");
    case 16:
      return std::string(u ? "unsigned short" : "short");
    case 8:
      return std::string(u ? "unsigned char" : "signed char");
    default:
      break;
    }
  }
  return failure();
}

std::string kiln::codegen::cudaLiteral(Type t, double value, int64_t intValue) {
  if (isa<FloatType>(t)) { // 16-bit values are exact in fp32, the compute type
    float f = float(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    char buf[40];
    std::snprintf(buf, sizeof(buf), "__int_as_float(0x%08x)", unsigned(bits));
    return buf;
  }
  if (t.isInteger(1))
    return intValue ? "true" : "false";
  // Unsigned: intValue holds the element's bits; the literal is the
  // unsigned number (a signed -1 literal would compare wrongly).
  if (t.isUnsignedInteger()) {
    unsigned width = t.getIntOrFloatBitWidth();
    uint64_t bits = width >= 64 ? uint64_t(intValue) : uint64_t(intValue) & ((1ull << width) - 1);
    return "(" + std::to_string(bits) + (width == 64 ? "ULL)" : "u)");
  }
  if (t.isInteger(64))
    return "(" + std::to_string(intValue) + "LL)";
  return "(" + std::to_string(intValue) + ")";
}

FailureOr<std::string> kiln::codegen::buildSignature(KernelOp kernel,
                                                     ArrayRef<unsigned> operands,
                                                     SmallVectorImpl<Value> &args,
                                                     unsigned launchBoundsThreads) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "extern \"C\" __global__ void __launch_bounds__(" << launchBoundsThreads << ") "
     << kKernelNamePlaceholder << "(";
  bool first = true;
  for (unsigned i : operands) {
    Value v = kernel.getInputs()[i];
    auto t = cudaStorageType(cast<RankedTensorType>(v.getType()).getElementType());
    if (failed(t))
      return kernel.emitError() << "unsupported: element type of operand " << i << " ("
                                << v.getType() << ") in kernel @" << kernel.getSymName();
    os << (first ? "" : ", ") << "const " << *t << " *__restrict__ in" << i;
    first = false;
    args.push_back(v);
  }
  for (auto [j, r] : llvm::enumerate(kernel.getResults())) {
    auto t = cudaStorageType(cast<RankedTensorType>(r.getType()).getElementType());
    if (failed(t))
      return kernel.emitError() << "unsupported: element type of result " << j << " ("
                                << r.getType() << ") in kernel @" << kernel.getSymName();
    os << (first ? "" : ", ") << *t << " *__restrict__ out" << j;
    first = false;
    args.push_back(r);
  }
  os << ")";
  return s;
}

std::string kiln::codegen::modulePrologue() {
  return "// Generated by kiln-compile. Do not edit.\n"
         "#include \"kiln/common.cuh\"\n"
         "#include \"kiln/gemm.cuh\"\n"
         "#include \"kiln/gemm_tc.cuh\"\n"
         "#include \"kiln/gemm_wgmma.cuh\"\n"
         "#include \"kiln/gemm_sm90.cuh\"\n"
         "#include \"kiln/gemm_skinny.cuh\"\n"
         "#include \"kiln/norm.cuh\"\n"
         "#include \"kiln/attention.cuh\"\n"
         "#include \"kiln/attention_sm90.cuh\"\n"
         "#include \"kiln/decode_attention.cuh\"\n"
         "#include \"kiln/sample.cuh\"\n\n";
}

unsigned kiln::codegen::gridFor(KernelOp kernel, int64_t work, int64_t perBlock) {
  int64_t blocks = (work + perBlock - 1) / perBlock;
  int64_t cap = getTargetOrDefault(kernel).getSmCount() * 32;
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(blocks, cap)));
}

void kiln::codegen::setMinBlocksPerSm(std::string &signature, unsigned threads,
                                      unsigned minBlocks) {
  const std::string bounds = "__launch_bounds__(" + std::to_string(threads) + ")";
  size_t pos = signature.find(bounds);
  assert(pos != std::string::npos && "buildSignature writes __launch_bounds__(threads)");
  signature.replace(pos, bounds.size(),
                    "__launch_bounds__(" + std::to_string(threads) + ", " +
                        std::to_string(minBlocks) + ")");
}

void kiln::codegen::addClusterDims(std::string &signature, unsigned threads,
                                   const std::string &dims) {
  std::string bounds = "__launch_bounds__(" + std::to_string(threads) + ")";
  size_t pos = signature.find(bounds);
  assert(pos != std::string::npos && "buildSignature writes __launch_bounds__(threads)");
  signature.insert(pos + bounds.size(), " __cluster_dims__(" + dims + ")");
}
