//===- Report.h - machine-readable reports of kiln-run ------------*- C++ -*-===//
//
// The JSON that kiln-run --json prints (the artifact description; kiln-run adds the run's
// results) and the Chrome trace-event file of --trace, built from an artifact and one profiled
// run's timeline. Part of the kiln_npy library (runtime only, no LLVM) so that the unit tests
// check the documents without a GPU. Formats: docs/runtime.md ("kiln-run --json", "--trace").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_REPORT_H
#define KILN_TOOLS_KILNRUN_REPORT_H

#include "kiln/runtime.h"

#include "JsonWriter.h"

#include <string>
#include <vector>

namespace kiln {
namespace report {

/// The label of launch `index` in tables: its name when the artifact records one
/// ("h.0.attn: matmul+add"), else its function name ("kiln_k3").
std::string launchLabel(const kiln_artifact_t *artifact, size_t index);

/// The layer of launch `index`, "" when none is recorded.
std::string launchLayer(const kiln_artifact_t *artifact, size_t index);

/// The repeated block a layer belongs to: the layer up to its first number after the first
/// component ("h.3.attn" -> "h.3", "layers.0.mlp" -> "layers.0", "layer.1.attention" ->
/// "layer.1"); layers without a number are their own block ("ln_f", "embeddings.LayerNorm");
/// "" stays "".
std::string blockOf(const std::string &layer);

/// "128B": the name of a tensor map swizzle ("none", "32B", "64B", "128B"; "?" out of range).
const char *tensorMapSwizzleName(kiln_tensor_map_swizzle_t swizzle);

/// "position_ids": kiln_input_role_name(role), or "?" out of range.
const char *inputRoleName(kiln_input_role_t role);

/// Writes the artifact description as one JSON object value: path, producer, arena_bytes,
/// weights_bytes, inputs and outputs (name, dtype, shape, bytes; value_range [min, max] for
/// inputs that record one; role for inputs whose role is not data, e.g. "position_ids"), modules (name, ptx_bytes, sass [{arch, bytes}]), launches (index,
/// function, module, grid, block, shared_mem_bytes, args, name, layer, ops, nodes, node_count,
/// flops, bytes_read, bytes_written; tensor_maps [{arg, offset, dtype, dims, strides, box,
/// swizzle}] for launches that have them), and for rank files tensor_parallel {world_size, rank,
/// group_hash} and collectives [{index, kind, dtype, count, before_launch}].
void writeArtifactJson(JsonWriter &json, const kiln_artifact_t *artifact);

/// Time per layer of a profile: launches whose layer is `layer` ("" for launches without one).
struct LayerTime {
  std::string layer;
  size_t launches = 0;
  double ms = 0;
};

/// Sums `launchMs` (one entry per launch) per layer; sorted by time, largest first (ties: first
/// appearance).
std::vector<LayerTime> timePerLayer(const kiln_artifact_t *artifact,
                                    const std::vector<float> &launchMs);

/// One run's timeline: start and end of every launch and collective in ms after the run began
/// (kiln_session_profile_timeline).
struct Timeline {
  std::vector<float> launchStartMs, launchEndMs;
  std::vector<float> collectiveStartMs, collectiveEndMs;
};

/// Returns a Chrome trace-event JSON document (the JSON object format: {"traceEvents": [...],
/// "displayTimeUnit": "ns"}) of `timeline`: process "kiln-run <artifact>" with, top to bottom,
/// a "blocks" track and a "layers" track with one slice per run of consecutive launches of one
/// block (blockOf) or layer, a "kernels" track holding one complete event (ph "X", ts/dur in
/// microseconds) per launch, named by launchLabel, with args {index, function, layer, ops, grid,
/// block, flops, bytes_read, bytes_written}, and a "collectives" track with one slice per
/// collective when there are any. Rank files
/// name their rank in the process name (pid = rank + 1). The timeline's vectors must have one
/// entry per launch / collective of `artifact`.
std::string chromeTrace(const kiln_artifact_t *artifact, const Timeline &timeline);

} // namespace report
} // namespace kiln

#endif // KILN_TOOLS_KILNRUN_REPORT_H
