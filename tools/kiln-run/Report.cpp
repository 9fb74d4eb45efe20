//===- Report.cpp - machine-readable reports of kiln-run ------------------===//
//
// JSON description of an artifact (kiln-run --json), time per layer, and the Chrome trace-event
// document of one profiled run (kiln-run --trace). See Report.h.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace kiln {
namespace report {
namespace {

/// "8x1x1".
std::string formatDims(const uint32_t dims[3]) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

void writeDims(JsonWriter &json, const uint32_t dims[3]) {
  json.beginArray();
  for (int i = 0; i < 3; ++i)
    json.value(dims[i]);
  json.endArray();
}

void writeTensor(JsonWriter &json, const kiln_tensor_info_t &info) {
  json.field("name", info.name);
  json.field("dtype", kiln_dtype_name(info.dtype));
  json.key("shape");
  json.beginArray();
  for (size_t d = 0; d < info.rank; ++d)
    json.value(static_cast<long long>(info.shape[d]));
  json.endArray();
  json.field("bytes", static_cast<unsigned long long>(info.byte_size));
}

/// Microseconds from milliseconds, for trace timestamps, rounded to nanoseconds (CUDA events
/// resolve about half a microsecond; the rounding drops float noise such as 8.99999961).
double us(float ms) { return std::round(static_cast<double>(ms) * 1e6) / 1e3; }

} // namespace

std::string launchLabel(const kiln_artifact_t *artifact, size_t index) {
  const char *name = kiln_artifact_launch_name(artifact, index);
  if (name && *name)
    return name;
  kiln_launch_info_t info;
  kiln_status_t status = kiln_artifact_launch_info(artifact, index, &info);
  std::string function = status ? "?" : info.function_name;
  kiln_status_free(status);
  return function;
}

std::string blockOf(const std::string &layer) {
  // "h.3.attn" -> "h.3": up to and including the first number after the first component.
  size_t start = 0;
  bool first = true;
  while (start <= layer.size()) {
    size_t end = layer.find('.', start);
    if (end == std::string::npos)
      end = layer.size();
    std::string part = layer.substr(start, end - start);
    if (!first && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
      return layer.substr(0, end);
    first = false;
    start = end + 1;
  }
  return layer;
}

std::string launchLayer(const kiln_artifact_t *artifact, size_t index) {
  const char *layer = kiln_artifact_launch_layer(artifact, index);
  return layer ? layer : "";
}

const char *tensorMapSwizzleName(kiln_tensor_map_swizzle_t swizzle) {
  switch (swizzle) {
  case KILN_TENSOR_MAP_SWIZZLE_NONE:
    return "none";
  case KILN_TENSOR_MAP_SWIZZLE_32B:
    return "32B";
  case KILN_TENSOR_MAP_SWIZZLE_64B:
    return "64B";
  case KILN_TENSOR_MAP_SWIZZLE_128B:
    return "128B";
  }
  return "?";
}

const char *inputRoleName(kiln_input_role_t role) {
  const char *name = kiln_input_role_name(role);
  return name ? name : "?";
}

void writeArtifactJson(JsonWriter &json, const kiln_artifact_t *artifact) {
  json.beginObject();
  json.field("path", kiln_artifact_path(artifact));
  json.field("producer", kiln_artifact_producer(artifact));
  json.field("arena_bytes", static_cast<unsigned long long>(kiln_artifact_arena_bytes(artifact)));
  json.field("weights_bytes",
             static_cast<unsigned long long>(kiln_artifact_weights_bytes(artifact)));
  // Programs (kiln-compile --kv-cache with a --shape range): this description's and every one.
  json.field("program", kiln_artifact_program_name(artifact));
  json.key("programs");
  json.beginArray();
  for (size_t p = 0; p < kiln_artifact_program_count(artifact); ++p) {
    kiln_artifact_t *program = nullptr;
    if (kiln_status_t status =
            kiln_artifact_program(const_cast<kiln_artifact_t *>(artifact), p, &program)) {
      kiln_status_free(status);
      continue;
    }
    json.beginObject();
    json.field("name", kiln_artifact_program_name(program));
    json.field("launches", static_cast<unsigned long long>(kiln_artifact_launch_count(program)));
    json.field("arena_bytes",
               static_cast<unsigned long long>(kiln_artifact_arena_bytes(program)));
    if (double us = kiln_artifact_program_estimated_us(program); us > 0)
      json.field("estimated_us", us);
    json.endObject();
    kiln_artifact_release(program);
  }
  json.endArray();

  kiln_tensor_info_t info;
  json.key("inputs");
  json.beginArray();
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    json.beginObject();
    writeTensor(json, info);
    int hasRange = 0;
    int64_t lo = 0, hi = 0;
    kiln_status_free(kiln_artifact_input_value_range(artifact, i, &hasRange, &lo, &hi));
    if (hasRange) {
      json.key("value_range");
      json.beginArray();
      json.value(static_cast<long long>(lo));
      json.value(static_cast<long long>(hi));
      json.endArray();
    }
    kiln_input_role_t role = KILN_INPUT_ROLE_DATA;
    kiln_status_free(kiln_artifact_input_role(artifact, i, &role));
    if (role != KILN_INPUT_ROLE_DATA)
      json.field("role", inputRoleName(role));
    json.endObject();
  }
  json.endArray();
  json.key("outputs");
  json.beginArray();
  for (size_t i = 0; i < kiln_artifact_output_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_output_info(artifact, i, &info));
    json.beginObject();
    writeTensor(json, info);
    json.endObject();
  }
  json.endArray();

  json.key("modules");
  json.beginArray();
  kiln_module_info_t module;
  for (size_t m = 0; m < kiln_artifact_module_count(artifact); ++m) {
    kiln_status_free(kiln_artifact_module_info(artifact, m, &module));
    json.beginObject();
    json.field("name", module.name);
    json.field("ptx_bytes", static_cast<unsigned long long>(module.ptx_bytes));
    json.key("sass");
    json.beginArray();
    for (size_t c = 0; c < module.cubin_count; ++c) {
      uint32_t arch = 0;
      uint64_t bytes = 0;
      kiln_status_free(kiln_artifact_module_cubin(artifact, m, c, &arch, &bytes));
      json.beginObject();
      json.field("arch", arch);
      json.field("bytes", static_cast<unsigned long long>(bytes));
      json.endObject();
    }
    json.endArray();
    json.endObject();
  }
  json.endArray();

  json.key("launches");
  json.beginArray();
  kiln_launch_info_t launch;
  for (size_t i = 0; i < kiln_artifact_launch_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_launch_info(artifact, i, &launch));
    json.beginObject();
    json.field("index", static_cast<unsigned long long>(i));
    json.field("function", launch.function_name);
    json.field("module", launch.module_name);
    json.key("grid");
    writeDims(json, launch.grid);
    json.key("block");
    writeDims(json, launch.block);
    json.field("shared_mem_bytes", launch.shared_mem_bytes);
    json.field("args", static_cast<unsigned long long>(launch.arg_count));
    json.field("name", launchLabel(artifact, i));
    json.field("layer", launchLayer(artifact, i));
    json.key("ops");
    json.beginArray();
    for (size_t o = 0; o < kiln_artifact_launch_op_count(artifact, i); ++o)
      json.value(kiln_artifact_launch_op(artifact, i, o));
    json.endArray();
    json.key("nodes");
    json.beginArray();
    for (size_t n = 0; n < kiln_artifact_launch_node_count(artifact, i); ++n)
      json.value(kiln_artifact_launch_node(artifact, i, n));
    json.endArray();
    json.field("node_count",
               static_cast<unsigned long long>(kiln_artifact_launch_node_total(artifact, i)));
    kiln_launch_cost_t cost;
    kiln_status_free(kiln_artifact_launch_cost(artifact, i, &cost));
    json.field("flops", static_cast<unsigned long long>(cost.flops));
    json.field("bytes_read", static_cast<unsigned long long>(cost.bytes_read));
    json.field("bytes_written", static_cast<unsigned long long>(cost.bytes_written));
    // Tensor maps (format version 3) only where a launch has them.
    size_t mapCount = kiln_artifact_launch_tensor_map_count(artifact, i);
    if (mapCount > 0) {
      json.key("tensor_maps");
      json.beginArray();
      for (size_t m = 0; m < mapCount; ++m) {
        kiln_tensor_map_info_t map;
        kiln_status_free(kiln_artifact_launch_tensor_map_info(artifact, i, m, &map));
        json.beginObject();
        json.field("arg", static_cast<unsigned long long>(map.arg));
        json.field("offset", static_cast<unsigned long long>(map.offset_bytes));
        json.field("dtype", kiln_dtype_name(map.dtype));
        json.key("dims");
        json.beginArray();
        for (size_t d = 0; d < map.rank; ++d)
          json.value(static_cast<unsigned long long>(map.dims[d]));
        json.endArray();
        json.key("strides");
        json.beginArray();
        for (size_t d = 0; d + 1 < map.rank; ++d)
          json.value(static_cast<unsigned long long>(map.strides[d]));
        json.endArray();
        json.key("box");
        json.beginArray();
        for (size_t d = 0; d < map.rank; ++d)
          json.value(static_cast<unsigned long long>(map.box[d]));
        json.endArray();
        json.field("swizzle", tensorMapSwizzleName(map.swizzle));
        json.endObject();
      }
      json.endArray();
    }
    json.endObject();
  }
  json.endArray();

  if (kiln_artifact_tp_world_size(artifact) > 1) {
    json.key("tensor_parallel");
    json.beginObject();
    json.field("world_size", kiln_artifact_tp_world_size(artifact));
    json.field("rank", kiln_artifact_tp_rank(artifact));
    char hash[32];
    std::snprintf(hash, sizeof(hash), "0x%016llx",
                  static_cast<unsigned long long>(kiln_artifact_tp_group_hash(artifact)));
    json.field("group_hash", std::string(hash));
    json.endObject();
    json.key("collectives");
    json.beginArray();
    kiln_collective_info_t collective;
    for (size_t c = 0; c < kiln_artifact_collective_count(artifact); ++c) {
      kiln_status_free(kiln_artifact_collective_info(artifact, c, &collective));
      json.beginObject();
      json.field("index", static_cast<unsigned long long>(c));
      json.field("kind", collective.kind);
      json.field("dtype", kiln_dtype_name(collective.dtype));
      json.field("count", static_cast<unsigned long long>(collective.count));
      json.field("before_launch", static_cast<unsigned long long>(collective.before_launch));
      json.endObject();
    }
    json.endArray();
  }
  json.endObject();
}

std::vector<LayerTime> timePerLayer(const kiln_artifact_t *artifact,
                                    const std::vector<float> &launchMs) {
  std::vector<LayerTime> layers;
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < launchMs.size(); ++i) {
    std::string layer = launchLayer(artifact, i);
    auto [it, inserted] = position.emplace(layer, layers.size());
    if (inserted)
      layers.push_back({layer, 0, 0.0});
    LayerTime &entry = layers[it->second];
    ++entry.launches;
    entry.ms += launchMs[i];
  }
  std::stable_sort(layers.begin(), layers.end(),
                   [](const LayerTime &a, const LayerTime &b) { return a.ms > b.ms; });
  return layers;
}

std::string chromeTrace(const kiln_artifact_t *artifact, const Timeline &timeline) {
  // Tracks top to bottom: blocks, layers, kernels, collectives.
  constexpr int kBlocks = 1, kLayers = 2, kKernels = 3, kCollectives = 4;
  uint32_t worldSize = kiln_artifact_tp_world_size(artifact);
  int pid = static_cast<int>(kiln_artifact_tp_rank(artifact)) + 1;
  std::string process = std::string("kiln-run ") + kiln_artifact_path(artifact);
  if (worldSize > 1)
    process += " (rank " + std::to_string(kiln_artifact_tp_rank(artifact)) + " of " +
               std::to_string(worldSize) + ")";

  JsonWriter json;
  json.beginObject();
  json.key("traceEvents");
  json.beginArray();
  auto metadata = [&](const char *what, int tid, const std::string &name) {
    json.beginObject();
    json.field("name", what);
    json.field("ph", "M");
    json.field("pid", pid);
    if (tid)
      json.field("tid", tid);
    json.key("args");
    json.beginObject();
    json.field("name", name);
    json.endObject();
    json.endObject();
  };
  metadata("process_name", 0, process);
  metadata("thread_name", kBlocks, "blocks");
  metadata("thread_name", kLayers, "layers");
  metadata("thread_name", kKernels, "kernels");
  if (!timeline.collectiveStartMs.empty())
    metadata("thread_name", kCollectives, "collectives");
  auto slice = [&](const std::string &name, const char *category, int tid, float startMs,
                   float endMs) {
    json.field("name", name);
    json.field("cat", category);
    json.field("ph", "X");
    json.field("pid", pid);
    json.field("tid", tid);
    json.field("ts", us(startMs));
    json.field("dur", us(std::max(endMs - startMs, 0.0f)));
  };

  size_t launches = std::min(timeline.launchStartMs.size(), timeline.launchEndMs.size());
  kiln_launch_info_t info;
  for (size_t i = 0; i < launches; ++i) {
    kiln_status_free(kiln_artifact_launch_info(artifact, i, &info));
    json.beginObject();
    slice(launchLabel(artifact, i), "kernel", kKernels, timeline.launchStartMs[i],
          timeline.launchEndMs[i]);
    json.key("args");
    json.beginObject();
    json.field("index", static_cast<unsigned long long>(i));
    json.field("function", info.function_name ? info.function_name : "");
    json.field("layer", launchLayer(artifact, i));
    std::string ops;
    for (size_t o = 0; o < kiln_artifact_launch_op_count(artifact, i); ++o)
      ops += (o ? "," : "") + std::string(kiln_artifact_launch_op(artifact, i, o));
    json.field("ops", ops);
    json.field("grid", formatDims(info.grid));
    json.field("block", formatDims(info.block));
    kiln_launch_cost_t cost;
    kiln_status_free(kiln_artifact_launch_cost(artifact, i, &cost));
    json.field("flops", static_cast<unsigned long long>(cost.flops));
    json.field("bytes_read", static_cast<unsigned long long>(cost.bytes_read));
    json.field("bytes_written", static_cast<unsigned long long>(cost.bytes_written));
    json.endObject();
    json.endObject();
  }
  // Layers and blocks: consecutive launches of one layer (block) form one slice.
  auto groupSlices = [&](const std::function<std::string(size_t)> &groupOf, const char *category,
                         int tid) {
    for (size_t i = 0; i < launches;) {
      std::string group = groupOf(i);
      size_t j = i + 1;
      while (j < launches && groupOf(j) == group)
        ++j;
      if (!group.empty()) {
        json.beginObject();
        slice(group, category, tid, timeline.launchStartMs[i], timeline.launchEndMs[j - 1]);
        json.endObject();
      }
      i = j;
    }
  };
  groupSlices([&](size_t i) { return launchLayer(artifact, i); }, "layer", kLayers);
  groupSlices([&](size_t i) { return blockOf(launchLayer(artifact, i)); }, "block", kBlocks);
  size_t collectives = std::min(timeline.collectiveStartMs.size(), timeline.collectiveEndMs.size());
  kiln_collective_info_t collective;
  for (size_t c = 0; c < collectives; ++c) {
    kiln_status_t status = kiln_artifact_collective_info(artifact, c, &collective);
    bool known = status == nullptr;
    kiln_status_free(status);
    std::string name = known ? collective.kind : "collective";
    json.beginObject();
    slice(name, "collective", kCollectives, timeline.collectiveStartMs[c],
          timeline.collectiveEndMs[c]);
    json.key("args");
    json.beginObject();
    json.field("index", static_cast<unsigned long long>(c));
    if (known) {
      json.field("dtype", kiln_dtype_name(collective.dtype));
      json.field("count", static_cast<unsigned long long>(collective.count));
      json.field("before_launch", static_cast<unsigned long long>(collective.before_launch));
    }
    json.endObject();
    json.endObject();
  }
  json.endArray();
  json.field("displayTimeUnit", "ns");
  json.endObject();
  return json.str();
}

} // namespace report
} // namespace kiln
