// add_kernel.cu - the reference add kernel of the runtime GPU tests, compiled to an sm_90 cubin.
//
// Same function as the PTX in TestArtifact.cpp: y[i] = x[i] + w[i]. Built with nvcc -cubin when
// nvcc is available, and embedded into kiln_runtime_gpu_tests to test the cubin path.
extern "C" __global__ void kiln_add(const float *x, const float *w, float *y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + w[i];
}
