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

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// The target a module without `kiln.target` is planned for.
inline constexpr llvm::StringLiteral kDefaultTargetName = "sm_90";

/// The table entry named `name` ("sm_80", "sm_90", ...); failure for a name
/// the table does not have.
mlir::FailureOr<TargetAttr> getTarget(mlir::MLIRContext *context, llvm::StringRef name);

/// The rates a target's reference GPU reaches on real kernels, for time estimates (the runtime's
/// prefill plan, through each program's estimate in the artifact): the data sheet's memory
/// bandwidth, dense 16-bit tensor-core rate and fp32 rate times the share kiln's kernels were
/// measured to reach on the H200, and a cost per launch beyond the roofline (fit on the H200:
/// KilnTarget.cpp). Bytes per second, FLOP per second (tensorFlopsPerSecond 0: no tensor cores),
/// seconds.
struct TargetRates {
  double memoryBytesPerSecond = 0, tensorFlopsPerSecond = 0, fp32FlopsPerSecond = 0;
  double launchSeconds = 0;
};

/// The rates of the table entry named `name`; std::nullopt for a name the table does not have.
std::optional<TargetRates> getTargetRates(llvm::StringRef name);

/// Roofline estimate of one launch of a program compiled at `precision`: max(flops / compute
/// rate, bytes / memory rate) + the launch cost, in seconds. The compute rate is the tensor-core
/// one for fp16/bf16, half of it for tf32 (when the target has tensor cores), else fp32.
double estimateLaunchSeconds(const TargetRates &rates, uint64_t flops, uint64_t bytes,
                             Precision precision);

/// Thread-block clusters of `clusterSize` blocks that are surely resident at once on `target`
/// when each SM holds `blocksPerSm` blocks of the kernel: the GPU places a cluster within one GPC
/// (graphics processing cluster), so each GPC may leave up to clusterSize - 1 of its block slots
/// empty: floor((SMs x blocksPerSm - GPCs x (clusterSize - 1)) / clusterSize), a lower bound.
/// ncu's "Max Active Clusters" on the H200 (8 GPCs, session 23) was 30 for clusters of 8 at 2
/// blocks per SM (bound 26), 47 for 5 (bound 46), 62 for 8 at 4 per SM (bound 59) and for 6 at 3
/// per SM (bound 59). Without a GPC count in the table: the slots over the cluster size.
/// clusterSize <= 1: every slot.
int64_t residentClusters(TargetAttr target, int64_t clusterSize, int64_t blocksPerSm);

/// The names in the table, comma separated, for diagnostics.
std::string getKnownTargetNames();

/// The `kiln.target` of the nearest ancestor of `op` (or `op` itself) that
/// has one, else the kDefaultTargetName entry.
TargetAttr getTargetOrDefault(mlir::Operation *op);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNTARGET_H
