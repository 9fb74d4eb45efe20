//===- TestDriver.h - CUDA driver calls the GPU tests make themselves -*- C++ -*-===//
//
// The GPU tests need a few driver calls of their own (device buffers, copies, page-locked host
// memory, a stream, free device memory) to drive the session API the way an application does.
// Like the runtime, they load libcuda.so.1 with dlopen, so the test binary starts on machines
// without a GPU and the tests skip there. Header-only; used by SessionGpuTest.cpp and
// CudaGraphGpuTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_TESTDRIVER_H
#define KILN_TEST_UNIT_TESTDRIVER_H

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {
namespace test {

/// The few driver calls the tests make themselves (page-locked host memory, a stream, device
/// buffers and copies, free device memory), dlopen'ed like the runtime does, in device 0's primary
/// context (retained and made current on the constructing thread while the object lives). ok() is
/// false when any of it is unavailable.
class DriverForTest {
public:
  DriverForTest() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return;
    // CUresult is an int-sized enum, CUdevice an int; contexts, streams are pointers.
    auto init = sym<int (*)(unsigned)>("cuInit");
    auto deviceGet = sym<int (*)(int *, int)>("cuDeviceGet");
    auto retain = sym<int (*)(void **, int)>("cuDevicePrimaryCtxRetain");
    auto push = sym<int (*)(void *)>("cuCtxPushCurrent_v2");
    pop = sym<int (*)(void **)>("cuCtxPopCurrent_v2");
    release = sym<int (*)(int)>("cuDevicePrimaryCtxRelease_v2");
    hostAlloc = sym<int (*)(void **, size_t, unsigned)>("cuMemHostAlloc");
    freeHost = sym<int (*)(void *)>("cuMemFreeHost");
    streamCreate = sym<int (*)(void **, unsigned)>("cuStreamCreate");
    streamSynchronize = sym<int (*)(void *)>("cuStreamSynchronize");
    streamDestroy = sym<int (*)(void *)>("cuStreamDestroy_v2");
    memAlloc = sym<int (*)(uint64_t *, size_t)>("cuMemAlloc_v2");
    memFree = sym<int (*)(uint64_t)>("cuMemFree_v2");
    memcpyHtoD = sym<int (*)(uint64_t, const void *, size_t)>("cuMemcpyHtoD_v2");
    memcpyDtoH = sym<int (*)(void *, uint64_t, size_t)>("cuMemcpyDtoH_v2");
    memGetInfo = sym<int (*)(size_t *, size_t *)>("cuMemGetInfo_v2");
    memGetAddressRange = sym<int (*)(uint64_t *, size_t *, uint64_t)>("cuMemGetAddressRange_v2");
    if (!init || !deviceGet || !retain || !push || !pop || !release || !hostAlloc || !freeHost ||
        !streamCreate || !streamSynchronize || !streamDestroy || !memAlloc || !memFree ||
        !memcpyHtoD || !memcpyDtoH || !memGetInfo || !memGetAddressRange)
      return;
    if (init(0u) != 0 || deviceGet(&device, 0) != 0 || retain(&context, device) != 0)
      return;
    retained = true;
    pushed = push(context) == 0;
  }
  ~DriverForTest() {
    void *popped = nullptr;
    if (pushed)
      pop(&popped);
    if (retained)
      release(device);
  }
  bool ok() const { return pushed; }

  int (*pop)(void **) = nullptr;
  int (*release)(int) = nullptr;
  int (*hostAlloc)(void **, size_t, unsigned) = nullptr;
  int (*freeHost)(void *) = nullptr;
  int (*streamCreate)(void **, unsigned) = nullptr;
  int (*streamSynchronize)(void *) = nullptr;
  int (*streamDestroy)(void *) = nullptr;
  int (*memAlloc)(uint64_t *, size_t) = nullptr;
  int (*memFree)(uint64_t) = nullptr;
  int (*memcpyHtoD)(uint64_t, const void *, size_t) = nullptr;
  int (*memcpyDtoH)(void *, uint64_t, size_t) = nullptr;
  int (*memGetInfo)(size_t *, size_t *) = nullptr;
  int (*memGetAddressRange)(uint64_t *, size_t *, uint64_t) = nullptr;

  /// Free device memory in bytes (cuMemGetInfo), 0 on failure.
  size_t freeBytes() const {
    size_t free = 0, total = 0;
    return memGetInfo(&free, &total) == 0 ? free : 0;
  }

private:
  template <typename F> F sym(const char *name) { return reinterpret_cast<F>(dlsym(lib, name)); }
  void *lib = nullptr;
  int device = 0;
  void *context = nullptr;
  bool retained = false;
  bool pushed = false;
};

/// Device buffers allocated through a DriverForTest, freed at the end of the scope.
struct DeviceBuffers {
  const DriverForTest &cu;
  std::vector<uint64_t> pointers;
  explicit DeviceBuffers(const DriverForTest &cu) : cu(cu) {}
  ~DeviceBuffers() {
    for (uint64_t pointer : pointers)
      cu.memFree(pointer);
  }
  /// Allocates `bytes` (0 on failure).
  uint64_t allocate(size_t bytes) {
    uint64_t pointer = 0;
    if (cu.memAlloc(&pointer, bytes) != 0)
      return 0;
    pointers.push_back(pointer);
    return pointer;
  }
};

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_TESTDRIVER_H
