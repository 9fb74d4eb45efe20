//===- KilnTarget.cpp - the target table ----------------------------------===//
//
// Every hardware number kiln plans with, per `--target`. Per-arch numbers
// (shared memory, registers) are the CUDA C++ Programming Guide's
// "Technical Specifications per Compute Capability" (the same as CCCL's
// cuda/__device/arch_traits.h); on sm_80 and newer a block may opt in to the
// SM's shared memory less the 1 KiB the driver reserves per block. The SM
// count is a fact of one product, not of the arch; each row names the GPU it
// is taken from. It steers the tile cost model and grid-stride launch
// sizes only, so another GPU of the same arch runs the same artifact
// correctly, perhaps with a less suited tile.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnTarget.h"

#include "dialects/kiln/KernelPlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

namespace {
struct TargetRow {
  const char *name;
  int64_t arch, smCount, smemPerBlock, smemPerSm, regsPerSm, l2Bytes, memoryBytes;
  TensorCores tensorCores;
  /// GPCs (graphics processing clusters) of the reference GPU: a thread-block cluster runs
  /// within one (residentClusters). 0: not known (no clusters planned for the arch).
  int64_t gpcs;
  /// TargetRates of the row's reference GPU: memory GB/s, dense 16-bit tensor-core TFLOP/s
  /// (0: none), fp32 CUDA-core TFLOP/s, each as the data sheet gives it.
  double memoryGBps, tensorTflops, fp32Tflops;
};

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr TargetRow kTargets[] = {
    // Columns: name, arch, SMs, shared memory per block and per SM, registers per SM, L2 bytes,
    // device memory of the largest GPU of the arch (a bound, not the reference GPU's).
    // T4: 40 SMs; Quadro RTX 8000: 48 GiB. kiln's tensor-core templates need sm_80.
    // Then the reference GPU's data-sheet rates: memory GB/s, dense fp16 tensor TFLOP/s, fp32
    // TFLOP/s (T4: 320, 65, 8.1; kiln runs no tensor-core kernel there).
    {"sm_75", 75, 40, 64 * kKiB, 64 * kKiB, 65536, 4 * kMiB, 48 * kGiB, TensorCores::None, 0, 320,
     0, 8.1},
    // A100 SXM: 108 SMs; A100 80GB.
    {"sm_80", 80, 108, 163 * kKiB, 164 * kKiB, 65536, 40 * kMiB, 80 * kGiB, TensorCores::MmaSync,
     0, 2039, 312, 19.5},
    // A10: 72 SMs; A40 / RTX A6000: 48 GiB.
    {"sm_86", 86, 72, 99 * kKiB, 100 * kKiB, 65536, 6 * kMiB, 48 * kGiB, TensorCores::MmaSync, 0,
     600, 125, 31.2},
    // L40S: 142 SMs, 48 GiB.
    {"sm_89", 89, 142, 99 * kKiB, 100 * kKiB, 65536, 96 * kMiB, 48 * kGiB, TensorCores::MmaSync,
     0, 864, 362, 91.6},
    // H100 / H200 SXM: 132 SMs in 8 GPCs; H200: 143771 MiB, 4800 GB/s. wgmma needs sm_90a code;
    // kiln builds sm_90 as sm_90a.
    {"sm_90", 90, 132, 227 * kKiB, 228 * kKiB, 65536, 50 * kMiB, 143771 * kMiB, TensorCores::Wgmma,
     8, 4800, 989, 67},
    {"sm_90a", 90, 132, 227 * kKiB, 228 * kKiB, 65536, 50 * kMiB, 143771 * kMiB,
     TensorCores::Wgmma, 8, 4800, 989, 67},
    // B200: 148 SMs, 192 GiB. Its tcgen05 MMAs have no kiln template; wgmma is sm_90a only.
    {"sm_100", 100, 148, 227 * kKiB, 228 * kKiB, 65536, 126 * kMiB, 192 * kGiB,
     TensorCores::MmaSync, 0, 8000, 2250, 80},
    // RTX 5090: 170 SMs; RTX PRO 6000 Blackwell: 96 GiB.
    {"sm_120", 120, 170, 99 * kKiB, 100 * kKiB, 65536, 96 * kMiB, 96 * kGiB, TensorCores::MmaSync,
     0, 1792, 209, 105},
};
} // namespace

FailureOr<TargetAttr> kiln::getTarget(MLIRContext *context, StringRef name) {
  for (const TargetRow &row : kTargets)
    if (name == row.name)
      return TargetAttr::get(context, row.name, row.arch, row.smCount, row.smemPerBlock,
                             row.smemPerSm, row.regsPerSm, row.l2Bytes, row.memoryBytes,
                             row.tensorCores);
  return failure();
}

std::optional<TargetRates> kiln::getTargetRates(StringRef name) {
  // What a real program reaches of the data sheet, fit on the H200 (docs/results.md, session 22:
  // the 0.8B Llama's prefill chunks of 32, 256 and 2048 tokens took 1.114, 1.946 and 8.000 ms;
  // the copy bandwidth measured 4.2 of 4.8 TB/s, its prefill GEMMs 450-630 of 989 TFLOP/s, and
  // a 32-token chunk spent about 5.4 us per launch beyond reading its weights).
  constexpr double kMemoryShare = 0.875, kTensorShare = 0.6, kFp32Share = 0.6;
  constexpr double kLaunchSeconds = 5.4e-6;
  for (const TargetRow &row : kTargets)
    if (name == row.name)
      return TargetRates{row.memoryGBps * 1e9 * kMemoryShare,
                         row.tensorTflops * 1e12 * kTensorShare,
                         row.fp32Tflops * 1e12 * kFp32Share, kLaunchSeconds};
  return std::nullopt;
}

int64_t kiln::residentClusters(TargetAttr target, int64_t clusterSize, int64_t blocksPerSm) {
  const int64_t slots = target.getSmCount() * blocksPerSm;
  if (clusterSize <= 1)
    return slots;
  int64_t gpcs = 0;
  for (const TargetRow &row : kTargets)
    if (target.getName() == row.name)
      gpcs = row.gpcs;
  return std::max<int64_t>(0, (slots - gpcs * (clusterSize - 1)) / clusterSize);
}

double kiln::estimateLaunchSeconds(const TargetRates &rates, uint64_t flops, uint64_t bytes,
                                   Precision precision) {
  const bool tensorCores = rates.tensorFlopsPerSecond > 0 && precision != Precision::FP32;
  const double rate = !tensorCores ? rates.fp32FlopsPerSecond
                      : precision == Precision::TF32 ? rates.tensorFlopsPerSecond / 2
                                                     : rates.tensorFlopsPerSecond;
  const double compute = rate > 0 ? double(flops) / rate : 0;
  const double memory =
      rates.memoryBytesPerSecond > 0 ? double(bytes) / rates.memoryBytesPerSecond : 0;
  return std::max(compute, memory) + rates.launchSeconds;
}

std::string kiln::getKnownTargetNames() {
  std::string names;
  for (const TargetRow &row : kTargets)
    names += (names.empty() ? "" : ", ") + std::string(row.name);
  return names;
}

TargetAttr kiln::getTargetOrDefault(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto target = p->getAttrOfType<TargetAttr>(kTargetAttrName))
      return target;
  FailureOr<TargetAttr> target = getTarget(op->getContext(), kDefaultTargetName);
  assert(succeeded(target) && "the default target is in the table");
  return *target;
}
