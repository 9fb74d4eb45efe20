//===- Nvrtc.h - CUDA C++ -> PTX / SASS through NVRTC -------------*- C++ -*-===//
//
// Compiles generated kernel modules with NVRTC, deviceless: PTX for the
// lowest requested target (forward compatible through the driver JIT) and a
// cubin (SASS) per target. Modules compile in parallel and identical sources
// compile once (cache keyed by a hash of source and options).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_NVRTC_H
#define KILN_COMPILER_CODEGEN_NVRTC_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::codegen {

/// Machine code of one module for one target.
struct CubinImage {
  unsigned arch = 0; ///< SM number, e.g. 90 for sm_90
  std::string image;
};

/// Result of compiling one module.
struct CompiledModule {
  std::string ptx;               ///< PTX of the lowest target (JIT-able on newer GPUs)
  std::vector<CubinImage> cubins; ///< one per distinct target, ascending
};

/// Parses "sm_90" / "90" (or "sm_90a": sm_90 modules build as sm_90a anyway)
/// into 90; the error names the bad spelling and the architectures this NVRTC
/// supports.
llvm::Expected<unsigned> parseTarget(llvm::StringRef target);

/// Compiles `sources` (each a complete CUDA C++ translation unit that may
/// include the embedded `kiln/*.cuh` headers) for every arch in `targets`
/// (non-empty, e.g. {90}), on up to `threads` threads. The error carries
/// the module name and NVRTC's log. `onProgress`, if set, is called after
/// each NVRTC compilation (one per module and target) with the number done
/// and the total, from the worker threads, one call at a time.
llvm::Expected<std::vector<CompiledModule>>
compileModules(llvm::ArrayRef<std::string> names, llvm::ArrayRef<std::string> sources,
               llvm::ArrayRef<unsigned> targets, unsigned threads,
               const std::function<void(size_t done, size_t total)> &onProgress = {});

/// The embedded device headers as (include name, text) pairs.
llvm::ArrayRef<std::pair<const char *, const char *>> embeddedCudaHeaders();

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_NVRTC_H
