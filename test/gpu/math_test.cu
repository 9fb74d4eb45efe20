// math_test.cu - GPU test of the scalar helpers of compiler/codegen/cuda/common.cuh that replace
// library functions in generated kernels: kiln::onePlusErf (exact GELU's 1 + erf) and
// kiln::onePlusTanh (GELU-tanh's 1 + tanh), against fp64 references on the host over
// [-12, 12] (a dense grid plus +-1e-8 .. 10 logarithmically) and at +-inf and NaN.
// Bounds: relative error <= 5e-6 where the reference is >= 1e-30 and |x| <= 6, <= 2e-5 where it
// is >= 1e-30 (the exponent's rounding grows with x^2), absolute error <= 1e-6 everywhere;
// 2 at +inf, 0 at -inf, NaN at NaN. (test/gpu/emulate_math.py, an fp32 emulation on the host, gives 3.6e-6 / 7.3e-6 /
// 3.7e-7 for onePlusErf and 9.2e-7 / 1.7e-6 / 1.8e-7 for onePlusTanh.) Prints the worst errors; exit 0 pass, 1 fail, 2 CUDA error.
// Build: test/gpu/build_math_test.sh [OUT]; run OUT. Needs an NVIDIA GPU (any arch).
#include "gpu_test_util.h"
#include "kiln/common.cuh"

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

__global__ void evalKernel(const float *x, float *erfOut, float *tanhOut, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    erfOut[i] = kiln::onePlusErf(x[i]);
    tanhOut[i] = kiln::onePlusTanh(x[i]);
  }
}

struct Worst {
  double rel = 0, relNear = 0, abs = 0;
  float atRel = 0, atAbs = 0;
};

int main() {
  std::vector<float> xs;
  for (int i = 0; i <= 240000; ++i)
    xs.push_back(-12.0f + 24.0f * float(i) / 240000.0f);
  for (int i = 0; i <= 2000; ++i) {
    float v = std::pow(10.0f, -8.0f + 9.0f * float(i) / 2000.0f);
    xs.push_back(v);
    xs.push_back(-v);
  }
  const int special = int(xs.size());
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  const int n = int(xs.size());
  float *dx, *de, *dt;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&de, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dt, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dx, xs.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  evalKernel<<<(n + 255) / 256, 256>>>(dx, de, dt, n);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> e(n), t(n);
  CHECK_CUDA(cudaMemcpy(e.data(), de, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(t.data(), dt, n * sizeof(float), cudaMemcpyDeviceToHost));

  bool ok = true;
  auto check = [&](const char *name, const std::vector<float> &got, auto ref) {
    Worst w;
    for (int i = 0; i < special; ++i) {
      const double x = xs[i], r = ref(x), a = std::fabs(double(got[i]) - r);
      if (a > w.abs)
        w.abs = a, w.atAbs = xs[i];
      if (r >= 1e-30) {
        const double rel = a / r;
        if (rel > w.rel)
          w.rel = rel, w.atRel = xs[i];
        if (std::fabs(x) <= 6.0)
          w.relNear = std::max(w.relNear, rel);
      }
    }
    const bool pass = w.relNear <= 5e-6 && w.rel <= 2e-5 && w.abs <= 1e-6 &&
                      got[special] == 2.0f && got[special + 1] == 0.0f &&
                      std::isnan(got[special + 2]);
    std::printf("%-12s max rel err %.3g (|x| <= 6: %.3g) at x = %g, max abs err %.3g at x = %g; "
                "+inf -> %g, -inf -> %g, NaN -> %g: %s\n",
                name, w.rel, w.relNear, w.atRel, w.abs, w.atAbs, got[special], got[special + 1],
                got[special + 2], pass ? "PASS" : "FAIL");
    ok = ok && pass;
  };
  check("onePlusErf", e, [](double x) { return x >= 0 ? 1.0 + std::erf(x) : std::erfc(-x); });
  check("onePlusTanh", t, [](double x) { return 2.0 / (1.0 + std::exp(-2.0 * x)); });
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(de));
  CHECK_CUDA(cudaFree(dt));
  std::printf("math_test: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
