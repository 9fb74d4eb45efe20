// kv_cache_test_util.h - what the KV-cache GPU tests (kv_cache_decode_test.cpp,
// kv_cache_programs_test.cpp) share: status printing, raw file reading, owning handles, and the
// comparison of a logits row with a reference row.
#ifndef KILN_TEST_GPU_KV_CACHE_TEST_UTIL_H
#define KILN_TEST_GPU_KV_CACHE_TEST_UTIL_H

#include "kiln/runtime.h"

#include "dialects/kiln/FloatBits.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

namespace kvtest {

/// True for a NULL status; otherwise prints "<tool>: <what>: [CODE] message", frees it, false.
inline bool ok(kiln_status_t s, const char *tool, const char *what) {
  if (!s)
    return true;
  std::fprintf(stderr, "%s: %s: [%s] %s\n", tool, what,
               kiln_status_code_name(kiln_status_code(s)), kiln_status_message(s));
  kiln_status_free(s);
  return false;
}

/// Reads a file of little-endian T values; false when missing, empty or not whole values.
template <typename T> bool readFile(const char *path, std::vector<T> &out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    return false;
  const std::streamsize n = f.tellg();
  if (n <= 0 || n % std::streamsize(sizeof(T)))
    return false;
  out.resize(size_t(n) / sizeof(T));
  f.seekg(0);
  return bool(f.read(reinterpret_cast<char *>(out.data()), n));
}

struct ArtifactRelease {
  void operator()(kiln_artifact_t *a) const { kiln_artifact_release(a); }
};
struct SessionRelease {
  void operator()(kiln_session_t *s) const { kiln_session_release(s); }
};
using ArtifactPtr = std::unique_ptr<kiln_artifact_t, ArtifactRelease>;
using SessionPtr = std::unique_ptr<kiln_session_t, SessionRelease>;

/// Copies output `name` (f32, f16 or bf16, `info` its description) of the last run into `out` as
/// floats: `info.byte_size` / element size values. False (printed) for another dtype or a failed
/// copy.
inline bool getOutputAsFloat(kiln_session_t *session, const char *name,
                             const kiln_tensor_info_t &info, std::vector<float> &out,
                             const char *tool) {
  if (info.dtype == KILN_DTYPE_F32) {
    out.resize(info.byte_size / 4);
    return ok(kiln_session_get_output(session, name, out.data(), out.size() * 4), tool, name);
  }
  if (info.dtype != KILN_DTYPE_F16 && info.dtype != KILN_DTYPE_BF16) {
    std::fprintf(stderr, "%s: output '%s' is not f32, f16 or bf16\n", tool, name);
    return false;
  }
  std::vector<uint16_t> bits(info.byte_size / 2);
  if (!ok(kiln_session_get_output(session, name, bits.data(), bits.size() * 2), tool, name))
    return false;
  out.resize(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    out[i] = info.dtype == KILN_DTYPE_F16 ? kiln::fromF16Bits(bits[i]) : kiln::fromBF16Bits(bits[i]);
  return true;
}

/// One logits row against the reference row (V values each): max |err| / max |ref| (infinite
/// when `have` holds a NaN or a value past 1e30), both argmaxes, and whether it passes: rel <= tol
/// and the argmaxes agree wherever the reference's top-2 margin exceeds 2 * tol * max |ref|.
struct RowCheck {
  double rel = 0;
  size_t argHave = 0, argWant = 0;
  bool pass = false;
};

inline RowCheck compareRow(const float *have, const float *want, size_t V, double tol) {
  double maxRef = 0, maxErr = 0;
  RowCheck r;
  for (size_t v = 0; v < V; ++v) {
    maxRef = std::max(maxRef, double(std::fabs(want[v])));
    maxErr = std::max(maxErr, double(std::fabs(double(want[v]) - have[v])));
    if (!(std::fabs(double(have[v])) < 1e30))
      maxErr = INFINITY;
    if (want[v] > want[r.argWant])
      r.argWant = v;
    if (have[v] > have[r.argHave])
      r.argHave = v;
  }
  double second = -INFINITY;
  for (size_t v = 0; v < V; ++v)
    if (v != r.argWant)
      second = std::max(second, double(want[v]));
  r.rel = maxErr / std::max(maxRef, 1e-30);
  const bool margin = want[r.argWant] - second > 2 * tol * maxRef;
  r.pass = r.rel <= tol && (!margin || r.argHave == r.argWant);
  return r;
}

} // namespace kvtest

#endif // KILN_TEST_GPU_KV_CACHE_TEST_UTIL_H
