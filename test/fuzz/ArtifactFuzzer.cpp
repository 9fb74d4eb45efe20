//===- ArtifactFuzzer.cpp - libFuzzer target: bytes -> artifact verifier ----===//
//
// Feeds arbitrary bytes to the runtime's artifact verifier, the code behind
// kiln_artifact_open (which maps the file and calls kiln::verifyArtifact on the
// mapping), then reads every accepted artifact back through the public C
// accessors. A rejection with a status is a normal outcome; a crash, a
// sanitizer report or a read outside the input is a finding (the verifier
// promises that no byte outside the file is ever read).
//
// Steps per input:
//   1. copy the bytes to an 8-byte aligned buffer of exactly `size` bytes (as
//      mmap gives; ASan sees any read past the end);
//   2. when the header records a CRC-32, recompute it over bytes [64, size)
//      and store it, so that mutated inputs reach the index checks instead of
//      stopping at the checksum. Inputs whose reserved header byte 48 has bit 0
//      set keep their CRC as given, which keeps the checksum check fuzzed too;
//   3. kiln::verifyArtifact; on success, every accessor of runtime.h with
//      every index, plus one past the end.
//
// Replay a file: kiln-fuzz-artifact FILE (KILN_FUZZ_VERBOSE=1 prints the status).
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "ArtifactHeader.h"

#include "kiln/runtime.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

bool verbose = false;

/// Sum of the tensor-map fields read back, so that the reads are not optimized away.
volatile uint64_t sink = 0;

/// Drops `status`, printing it with KILN_FUZZ_VERBOSE.
void drop(kiln_status_t status) {
  if (status && verbose)
    std::fprintf(stderr, "kiln-fuzz-artifact: %s\n", kiln_status_message(status));
  kiln_status_free(status);
}

/// Step 3: reads everything a verified artifact offers.
void readBack(const kiln_artifact_t *a) {
  (void)kiln_artifact_path(a);
  (void)kiln_artifact_producer(a);
  (void)kiln_artifact_arena_bytes(a);
  (void)kiln_artifact_weights_bytes(a);
  (void)kiln_artifact_tp_world_size(a);
  (void)kiln_artifact_tp_rank(a);
  (void)kiln_artifact_tp_group_hash(a);
  size_t found = 0;
  for (size_t i = 0, n = kiln_artifact_input_count(a); i <= n; ++i) {
    kiln_tensor_info_t info;
    kiln_status_t status = kiln_artifact_input_info(a, i, &info);
    if (!status && info.name)
      drop(kiln_artifact_find_input(a, info.name, &found));
    drop(status);
  }
  for (size_t i = 0, n = kiln_artifact_output_count(a); i <= n; ++i) {
    kiln_tensor_info_t info;
    kiln_status_t status = kiln_artifact_output_info(a, i, &info);
    if (!status && info.name)
      drop(kiln_artifact_find_output(a, info.name, &found));
    drop(status);
  }
  drop(kiln_artifact_find_input(a, "no such input", &found));
  for (size_t i = 0, n = kiln_artifact_module_count(a); i <= n; ++i) {
    kiln_module_info_t info;
    kiln_status_t status = kiln_artifact_module_info(a, i, &info);
    size_t cubins = status ? 1 : info.cubin_count + 1;
    drop(status);
    for (size_t c = 0; c < cubins; ++c) {
      uint32_t arch = 0;
      uint64_t bytes = 0;
      drop(kiln_artifact_module_cubin(a, i, c, &arch, &bytes));
    }
  }
  for (size_t i = 0, n = kiln_artifact_launch_count(a); i <= n; ++i) {
    kiln_launch_info_t info;
    drop(kiln_artifact_launch_info(a, i, &info));
    // Tensor maps: read every entry of the arrays the info points at.
    for (size_t m = 0, maps = kiln_artifact_launch_tensor_map_count(a, i); m <= maps; ++m) {
      kiln_tensor_map_info_t map;
      drop(kiln_artifact_launch_tensor_map_info(a, i, m, &map));
      uint64_t sum = map.arg + map.offset_bytes;
      for (size_t d = 0; d < map.rank; ++d)
        sum += map.dims[d] + map.box[d] + (d + 1 < map.rank ? map.strides[d] : 0);
      sink = sink + sum;
    }
  }
  for (size_t i = 0, n = kiln_artifact_collective_count(a); i <= n; ++i) {
    kiln_collective_info_t info;
    drop(kiln_artifact_collective_info(a, i, &info));
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::artifact;
  // 1. An aligned buffer of exactly `size` bytes (operator new aligns to 16).
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size ? size : 1]);
  if (size)
    std::memcpy(copy.get(), data, size);

  // 2. Keep the CRC-32 consistent unless the input asks otherwise.
  if (size >= kHeaderSize && std::memcmp(copy.get(), kMagic, sizeof(kMagic)) == 0 &&
      detail::loadLE(copy.get() + 40, 4) == kChecksumCrc32 && !(copy[48] & 1)) {
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32_z(crc, copy.get() + kHeaderSize, size - kHeaderSize);
    detail::storeLE(copy.get() + 44, static_cast<uint32_t>(crc), 4);
  }

  // 3. Verify; read back what was accepted. The artifact never owns `copy`.
  kiln_artifact artifact;
  artifact.path = "fuzz-input.kiln";
  kiln_status_t status = kiln::verifyArtifact(copy.get(), size, artifact);
  if (!status)
    readBack(&artifact);
  drop(status);
  artifact.data = nullptr;
  artifact.size = 0;
  return 0;
}
