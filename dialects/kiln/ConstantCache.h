//===- ConstantCache.h - weight transforms shared across programs -*- C++ -*-===//
//
// A --shape range compiles one program per step shape in one MLIRContext, and
// every program's pipeline transforms the same weights the same way (narrowed
// to fp16, gate/up columns interleaved, sibling GEMMs' weights concatenated).
// Dense constants are uniqued by the context, so a weight is one Attribute in
// every program: the cache maps (transform, input attributes) to the result
// the first program computed, and the others skip the work (the 0.8B Llama's
// weights are 3.4 GB in fp32; each transform touches all of them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_CONSTANTCACHE_H
#define KILN_DIALECTS_KILN_CONSTANTCACHE_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <mutex>
#include <string>

namespace kiln {

/// Results of deterministic transforms of constant attributes, per MLIRContext (owned by the
/// kiln dialect, so entries never outlive the attributes they name). Thread-safe: programs run
/// their pipelines in parallel.
class ConstantCache {
public:
  /// The cache of `context` (loads the kiln dialect if needed).
  static ConstantCache &get(mlir::MLIRContext *context);

  /// The result of transform `kind` (a name for the pass and transform; compared by content) of `key`
  /// (the input attributes and any parameters as attributes, in a fixed order): `compute()` the
  /// first time, the stored result after. A transform must depend on nothing but `kind` and
  /// `key`. A null result is not stored.
  mlir::Attribute getOrCompute(llvm::StringRef kind, llvm::ArrayRef<mlir::Attribute> key,
                               llvm::function_ref<mlir::Attribute()> compute);

  /// Entries stored and lookups answered from the cache (for tests).
  size_t size() const;
  size_t hits() const;

private:
  using Key = std::pair<std::string, llvm::SmallVector<const void *, 4>>;
  struct KeyInfo {
    // No transform is named with a NUL byte.
    static Key getEmptyKey() { return {std::string(1, '\0'), {}}; }
    static Key getTombstoneKey() { return {std::string(2, '\0'), {}}; }
    static unsigned getHashValue(const Key &k);
    static bool isEqual(const Key &a, const Key &b) { return a == b; }
  };
  mutable std::mutex mutex;
  llvm::DenseMap<Key, mlir::Attribute, KeyInfo> entries;
  size_t hitCount = 0;
};

/// A buffer of at least `bytes` bytes in which a weight transform builds a constant before
/// MLIR copies it into the context (DenseElementsAttr::getFromRawBuffer). One per thread, kept
/// between calls up to kMaxScratchBytes, so that transforms of gigabytes of weights (fp16
/// narrowing, GLU interleave, sibling-GEMM concatenation) neither zero nor fault in a fresh
/// temporary per weight. Its contents are unspecified; valid until the next call on the same
/// thread (other threads may write into it meanwhile, e.g. a parallelFor's workers).
llvm::MutableArrayRef<char> scratchBytes(size_t bytes);
/// The largest scratch buffer kept between calls (larger ones are freed after use).
constexpr size_t kMaxScratchBytes = size_t(256) << 20;

} // namespace kiln

#endif // KILN_DIALECTS_KILN_CONSTANTCACHE_H
