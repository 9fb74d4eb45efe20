//===- OnnxTensors.cpp - ONNX data types and tensor payloads --------------===//
//
// Maps ONNX data types to kiln element types and converts TensorProtos
// (initializers, Constant node values, ConstantOfShape values) into
// DenseElementsAttr: from raw_data (little-endian, copied with
// getFromRawBuffer), from the typed repeated fields, or from ONNX external
// data (a file relative to the model directory with offset/length, mapped
// once and bounds-checked; the pages of a tensor are released once it is
// copied).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SwapByteOrder.h"

#include <sys/mman.h>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;
using llvm::Expected;

using onnx::TensorProto;

std::string onnx_import::getDataTypeName(int32_t dataType) {
  if (TensorProto::DataType_IsValid(dataType) && dataType != TensorProto::UNDEFINED)
    return TensorProto::DataType_Name(TensorProto::DataType(dataType));
  return "<data type " + std::to_string(dataType) + ">";
}

Type onnx_import::getElementType(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case TensorProto::FLOAT:
    return b.getF32Type();
  case TensorProto::FLOAT16:
    return b.getF16Type();
  case TensorProto::BFLOAT16:
    return b.getBF16Type();
  case TensorProto::INT64:
    return b.getI64Type();
  case TensorProto::INT32:
    return b.getI32Type();
  case TensorProto::INT16:
    return b.getIntegerType(16);
  case TensorProto::INT8:
    return b.getIntegerType(8);
  case TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string onnx_import::unsupportedDataTypeMessage(int32_t dataType) {
  return "unsupported: data type " + getDataTypeName(dataType) +
         " (kiln tensors are FLOAT, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, "
         "UINT32, UINT16, UINT8 or BOOL)";
}


std::optional<int64_t> kiln::onnx_import::checkedElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> product = llvm::checkedMul(count, d);
    if (!product || *product > kMaxImportElements)
      return std::nullopt;
    count = *product;
  }
  return count;
}

std::string kiln::onnx_import::notARegularFile(const Twine &path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status) || !llvm::sys::fs::exists(status) ||
      llvm::sys::fs::is_regular_file(status) || llvm::sys::fs::is_directory(status))
    return "";
  return "not a regular file (a FIFO, socket or device)";
}

static llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Expected<RankedTensorType> TensorLoader::getType(const TensorProto &tensor) {
  Type elem = getElementType(ctx, tensor.data_type());
  if (!elem)
    return makeError(unsupportedDataTypeMessage(tensor.data_type()));
  SmallVector<int64_t> shape;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return makeError("negative dim " + Twine(d) + " in tensor dims");
    shape.push_back(d);
  }
  if (!checkedElementCount(shape))
    return makeError("tensor has more than 2^40 elements");
  return RankedTensorType::get(shape, elem);
}

Expected<ArrayRef<char>> TensorLoader::readExternal(const TensorProto &tensor, uint64_t size,
                                                    llvm::MemoryBuffer *&mapped) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    auto parseNumber = [&](uint64_t &out) -> llvm::Error {
      if (StringRef(entry.value()).getAsInteger(10, out))
        return makeError("external data " + entry.key() + " '" + entry.value() +
                         "' is not a non-negative integer");
      return llvm::Error::success();
    };
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (llvm::Error e = parseNumber(offset))
        return std::move(e);
    } else if (entry.key() == "length") {
      uint64_t v = 0;
      if (llvm::Error e = parseNumber(v))
        return std::move(e);
      length = v;
    } else if (entry.key() != "checksum") {
      return makeError("unsupported: external data key '" + entry.key() + "'");
    }
  }
  if (location.empty())
    return makeError("external data has no 'location'");
  if (llvm::sys::path::is_absolute(location))
    return makeError("external data location '" + location +
                     "' must be relative to the model directory");
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location)))
    if (part == "..")
      return makeError("external data location '" + location +
                       "' must not leave the model directory");
  if (length && *length != size)
    return makeError("external data length " + Twine(*length) + " does not match the " +
                     Twine(size) + " bytes of the tensor's type");

  SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  auto &file = files[path];
  if (!file) {
    // Opening a FIFO would block until a writer appears: only regular files.
    if (std::string reason = notARegularFile(path); !reason.empty())
      return makeError("cannot open external data file '" + path + "': " + reason);
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return makeError("cannot open external data file '" + path +
                       "': " + buffer.getError().message());
    file = std::move(*buffer);
  }
  uint64_t fileSize = file->getBufferSize();
  if (offset > fileSize || size > fileSize - offset)
    return makeError("external data [offset " + Twine(offset) + ", size " + Twine(size) +
                     "] is outside the " + Twine(fileSize) + " bytes of '" + path + "'");
  mapped = file.get();
  return ArrayRef<char>(file->getBufferStart() + offset, size);
}

/// Gives the whole pages of `bytes`, a range of `file`, back to the page cache when `file` is a
/// read-only mapping (madvise MADV_DONTNEED; a later read faults them in again from the file):
/// called once a tensor's constant holds a copy of them, so that a multi-GB external data file
/// is not resident beside its constants (the 0.8B Llama's 3.4 GB file was, at the end of its
/// import). llvm::MemoryBuffer::dontNeedIfMmap would do it for the whole file, but it uses
/// posix_madvise, which glibc ignores for POSIX_MADV_DONTNEED.
static void releaseMappedPages(const llvm::MemoryBuffer &file, ArrayRef<char> bytes) {
  if (file.getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap || bytes.empty())
    return;
  const uintptr_t page = llvm::sys::Process::getPageSizeEstimate();
  // Whole pages of the mapping only: its first page may begin before the buffer.
  uintptr_t lowest = llvm::alignTo(reinterpret_cast<uintptr_t>(file.getBufferStart()), page);
  uintptr_t begin =
      std::max(lowest, llvm::alignDown(reinterpret_cast<uintptr_t>(bytes.data()), page));
  uintptr_t end = llvm::alignDown(reinterpret_cast<uintptr_t>(bytes.data() + bytes.size()), page);
  if (end > begin)
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

/// Builds an attribute of `type` from `count` values read by `get(i)` as
/// APInt/APFloat-convertible numbers.
static DenseElementsAttr fromBits(RankedTensorType type, int64_t count,
                                  llvm::function_ref<uint64_t(int64_t)> get) {
  Type elem = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(elem)) {
    SmallVector<APFloat> vals;
    vals.reserve(count);
    for (int64_t i = 0; i < count; ++i)
      vals.emplace_back(ft.getFloatSemantics(), APInt(ft.getWidth(), get(i)));
    return DenseElementsAttr::get(type, vals);
  }
  unsigned width = elem.getIntOrFloatBitWidth();
  if (width == 1) {
    SmallVector<bool> vals;
    vals.reserve(count);
    for (int64_t i = 0; i < count; ++i)
      vals.push_back(get(i) != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(vals));
  }
  SmallVector<APInt> vals;
  vals.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    vals.push_back(APInt(width, get(i), /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, vals);
}

Expected<DenseElementsAttr> TensorLoader::load(const TensorProto &tensor) {
  if (llvm::sys::IsBigEndianHost)
    return makeError("unsupported: ONNX tensors on a big-endian host");
  Expected<RankedTensorType> typeOr = getType(tensor);
  if (!typeOr)
    return typeOr.takeError();
  RankedTensorType type = *typeOr;
  int64_t count = type.getNumElements();
  Type elem = type.getElementType();
  uint64_t byteSize = uint64_t(count) * getElementByteSize(elem);
  if (tensor.has_segment())
    return makeError("unsupported: segmented tensor");

  // 1. Raw bytes: inline raw_data or external data.
  std::optional<ArrayRef<char>> raw;
  llvm::MemoryBuffer *externalFile = nullptr;
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    Expected<ArrayRef<char>> bytes = readExternal(tensor, byteSize, externalFile);
    if (!bytes)
      return bytes.takeError();
    raw = *bytes;
  } else if (tensor.has_raw_data()) {
    raw = ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  }
  if (raw) {
    if (raw->size() != byteSize)
      return makeError("payload has " + Twine(raw->size()) + " bytes, its type " +
                       formatShape(type.getShape()) + " x " +
                       getDataTypeName(tensor.data_type()) + " needs " + Twine(byteSize));
    DenseElementsAttr attr =
        elem.isInteger(1)
            ? fromBits(type, count, [&](int64_t i) { return uint64_t((*raw)[i] != 0); })
            : DenseElementsAttr::getFromRawBuffer(type, *raw);
    if (externalFile)
      releaseMappedPages(*externalFile, *raw);
    return attr;
  }

  // 2. Typed fields.
  auto checkCount = [&](int64_t n) -> llvm::Error {
    if (n != count)
      return makeError("payload has " + Twine(n) + " values, its dims " +
                       formatShape(type.getShape()) + " need " + Twine(count));
    return llvm::Error::success();
  };
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    if (llvm::Error e = checkCount(tensor.float_data_size()))
      return std::move(e);
    return DenseElementsAttr::get(
        type, ArrayRef<float>(tensor.float_data().data(), tensor.float_data_size()));
  case TensorProto::INT64:
    if (llvm::Error e = checkCount(tensor.int64_data_size()))
      return std::move(e);
    return DenseElementsAttr::get(
        type, ArrayRef<int64_t>(tensor.int64_data().data(), tensor.int64_data_size()));
  case TensorProto::INT32:
  case TensorProto::INT16:
  case TensorProto::INT8:
  case TensorProto::UINT16:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    // int32_data holds int32/int16/int8/uint16/uint8 values, bools as 0/1 and
    // 16-bit floats as bits; fromBits truncates each to the element width.
    if (llvm::Error e = checkCount(tensor.int32_data_size()))
      return std::move(e);
    return fromBits(type, count, [&](int64_t i) {
      int32_t v = tensor.int32_data(i);
      return elem.isF16() || elem.isBF16() ? uint64_t(uint16_t(v)) : uint64_t(int64_t(v));
    });
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    // uint64_data holds uint32 and uint64 values.
    if (llvm::Error e = checkCount(tensor.uint64_data_size()))
      return std::move(e);
    return fromBits(type, count, [&](int64_t i) { return tensor.uint64_data(i); });
  default:
    return makeError(unsupportedDataTypeMessage(tensor.data_type()));
  }
}
