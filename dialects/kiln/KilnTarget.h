//===- KilnTarget.h - the target table ------------------------------*- C++ -*-===//
//
// The one place hardware numbers live: `getTarget` returns the
// `#kiln.target` of a `--target` name from the table in KilnTarget.cpp, and
// `getTargetOrDefault` the target an op is compiled for.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNTARGET_H
#define KILN_DIALECTS_KILN_KILNTARGET_H

#include "dialects/kiln/KilnOps.h"

#include <string>

namespace kiln {

/// The target a module without `kiln.target` is planned for.
inline constexpr llvm::StringLiteral kDefaultTargetName = "sm_90";

/// The table entry named `name` ("sm_80", "sm_90", ...); failure for a name
/// the table does not have.
mlir::FailureOr<TargetAttr> getTarget(mlir::MLIRContext *context, llvm::StringRef name);

/// The names in the table, comma separated, for diagnostics.
std::string getKnownTargetNames();

/// The `kiln.target` of the nearest ancestor of `op` (or `op` itself) that
/// has one, else the kDefaultTargetName entry.
TargetAttr getTargetOrDefault(mlir::Operation *op);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNTARGET_H
