//===- SampleEmitter.cpp - the next-token sampler (kiln.sample) -----------===//
//
// `kiln.sample`, the next token of every row of a generation step's logits with the row's
// temperature, top-k, top-p, seed and offset (run-time inputs): one block per row running
// kiln::sampleRow (cuda/sample.cuh; the algorithm and its cost are described there). Greedy
// rows make one pass over the row; sampled rows a few more (radix selections over the logits'
// bits), all inside the step's CUDA graph, so a step copies back B integers.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmitter.h"
#include "dialects/kiln/KilnTarget.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

/// Most threads per row: sampleRow keeps 16 weight and 16 count accumulators per thread, which
/// 1024 threads (64 registers each) would spill.
constexpr unsigned kMaxSampleThreads = 512;

FailureOr<GeneratedKernel> emitSample(KernelOp kernel, Operation *anchor) {
  auto sample = cast<SampleOp>(anchor);
  if (kernel.getYield().getNumOperands() != 1 ||
      kernel.getYield().getValues()[0] != sample.getResult())
    return kernel.emitError() << "unsupported: sample kernel @" << kernel.getSymName()
                              << " fused with other ops";
  SmallVector<unsigned> inputs;
  for (Value operand : sample->getOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg)
      return kernel.emitError() << "unsupported: sample kernel @" << kernel.getSymName()
                                << " computes an operand in the kernel";
    inputs.push_back(arg.getArgNumber());
  }
  auto logits = cast<RankedTensorType>(sample.getLogits().getType());
  const int64_t rows = logits.getDimSize(0), vocab = logits.getShape().back();
  constexpr int64_t kMaxVocab = int64_t(1) << 23; // kiln::sample::kMaxVocab
  if (vocab > kMaxVocab)
    return kernel.emitError() << "unsupported: sample kernel @" << kernel.getSymName()
                              << " over a vocabulary of " << vocab
                              << " exceeds 8388608 (2^23), the sampler's fixed-point limit";
  if (rows > INT32_MAX)
    return kernel.emitError() << "unsupported: sample over " << rows
                              << " rows exceeds the CUDA grid's x limit";
  GeneratedKernel out;
  // About 32 elements per thread, 128 to 512 threads.
  const unsigned threads = unsigned(std::clamp<uint64_t>(
      llvm::PowerOf2Ceil(uint64_t(std::max<int64_t>(vocab, 1)) / 32), 128, kMaxSampleThreads));
  SmallVector<unsigned> unique(inputs);
  llvm::sort(unique);
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  auto sig = buildSignature(kernel, unique, out.args, threads);
  if (failed(sig))
    return failure();
  // A row's maximum over a cluster of blocks (sampleRow's CLUSTER, sm_90; below it the extra
  // blocks return at once) when one block would loop over the row more than once with
  // sample::kLoads loads in flight per thread: the greedy token of a 32000-word vocabulary in
  // one pass of 8 blocks instead of 8 passes of one. The grid is then (CLUSTER, rows). Not when
  // the plan's target has no clusters (below sm_90) or the rows alone fill the SMs.
  constexpr int64_t kSampleLoads = 8; // kiln::sample::kLoads
  TargetAttr target = getTargetOrDefault(kernel);
  const int64_t cluster =
      target.getArch() >= 90 && rows < int64_t(target.getSmCount()) // grid y: far below 65535
          ? std::clamp<int64_t>((vocab + threads * kSampleLoads - 1) / (threads * kSampleLoads), 1,
                                8)
          : 1;
  std::string signature = *sig;
  if (cluster > 1) {
    const std::string bounds = "__launch_bounds__(" + std::to_string(threads) + ")";
    signature.insert(signature.find(bounds) + bounds.size(),
                     " KILN_CLUSTER_DIMS(" + std::to_string(cluster) + ", 1, 1)");
  }
  out.source =
      (cluster > 1 ? llvm::formatv("// sample over {0} words: each row's maximum over a cluster "
                                   "of {1} blocks\n",
                                   vocab, cluster)
                         .str()
                   : std::string()) +
      signature + " {\n" +
      llvm::formatv("  const long long row = blockIdx.{7};\n"
                    "  const auto load = [&](long long k) {{ return kiln::ld(in{0}[row * {6}LL + "
                    "k]); };\n"
                    "  kiln::sampleRow<decltype(load), true, {8}>(load, {6}LL, in{1}[row], "
                    "in{2}[row], in{3}[row],\n"
                    "                  (unsigned long long)in{4}[row], (unsigned long "
                    "long)in{5}[row], out0 + row);\n}\n",
                    inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], inputs[5], vocab,
                    cluster > 1 ? "y" : "x", cluster)
          .str();
  out.block = {threads, 1, 1};
  out.grid = cluster > 1 ? std::array<unsigned, 3>{unsigned(cluster), unsigned(rows), 1}
                         : std::array<unsigned, 3>{unsigned(std::max<int64_t>(1, rows)), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populateSampleEmitters(EmitterRegistry &registry) {
  registry.addAnchor<SampleOp>(emitSample, /*acceptsFusedOps=*/false);
}
