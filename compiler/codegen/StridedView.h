//===- StridedView.h - operands as strided views of kernel parameters -*- C++ -*-===//
//
// A value inside a `kiln.kernel` body that is only a relabelling of a kernel
// parameter (transposes, step-1 slices, broadcasts, reshapes that keep
// contiguous groups together) plus scalar scaling is a strided view:
// element (i0, ..., in) lives at param[offset + sum(i_d * stride_d)] times a
// constant. The tensor-core GEMM reads such operands with 16-byte copies
// instead of evaluating a per-element expression.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_STRIDEDVIEW_H
#define KILN_COMPILER_CODEGEN_STRIDEDVIEW_H

#include "dialects/kiln/KilnOps.h"

#include "llvm/ADT/SmallVector.h"

namespace kiln::codegen {

/// `value` = scale * param[offset + sum(coords[d] * strides[d])], in elements
/// of the parameter's type. Size-1 dims have stride 0.
struct StridedView {
  mlir::BlockArgument param;          ///< the kernel-body argument read
  int64_t offset = 0;                 ///< elements
  llvm::SmallVector<int64_t> shape;   ///< of the viewed value
  llvm::SmallVector<int64_t> strides; ///< elements; 0 for broadcast / size-1 dims
  double scale = 1.0;                 ///< product of the scalar factors on the way
};

/// Describes `v` (a value of `kernel`'s body) as a strided view of one kernel
/// operand, looking through kiln.transpose, kiln.slice, kiln.expand,
/// kiln.reshape and multiplication / division by a scalar constant (and
/// kiln.neg). Fails (no diagnostic) when any op on the way is something else,
/// a reshape splits or merges non-contiguous dims, a slice steps, the element
/// type changes, or the leaf is not a kernel operand.
mlir::FailureOr<StridedView> analyzeStridedView(KernelOp kernel, mlir::Value v);

/// `operand` (a [B, H, S, D] value of `kernel`'s body) as the device-side `kiln::AttnTensor<type>
/// {in<p> + offset, sb, sh, ss}` (cuda/attention.cuh) that the attention kernels read with
/// 16-byte copies: a strided view of a passed kernel parameter `p` (one of `passed`) with unit
/// stride along D and offset and strides multiples of 8 elements. The view's scalar factor is
/// multiplied into `scale`. Failure (no diagnostic) otherwise.
mlir::FailureOr<std::string> attnTensorView(KernelOp kernel, mlir::Value operand,
                                            llvm::ArrayRef<unsigned> passed,
                                            const std::string &type, double &scale);

/// The layout of `view` as a GEMM operand of `rows` x `kExtent` elements
/// (`rowDim` / `kDim` index its dims along the rows and along K): K-major
/// (unit stride along K, or K = 1) with `ld` the row stride, or MN-major
/// (unit stride along the rows, or one row) with `ld` the K stride. A dim of
/// extent 1 counts as stride 0. Failure when neither dim has unit stride.
struct GemmOperandLayout {
  bool kMajor;
  int64_t ld; ///< elements
};
mlir::FailureOr<GemmOperandLayout> gemmOperandLayout(const StridedView &view, int64_t rowDim,
                                                     int64_t kDim, int64_t rows, int64_t kExtent);

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_STRIDEDVIEW_H
