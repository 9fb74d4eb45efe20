//===- ConstantCache.cpp - weight transforms shared across programs -------===//

#include "dialects/kiln/ConstantCache.h"

#include "dialects/kiln/KilnDialect.h"

#include "llvm/ADT/Hashing.h"

using namespace mlir;
using namespace kiln;

ConstantCache &ConstantCache::get(MLIRContext *context) {
  return context->getOrLoadDialect<KilnDialect>()->getConstantCache();
}

unsigned ConstantCache::KeyInfo::getHashValue(const Key &k) {
  return unsigned(llvm::hash_combine(
      k.first, llvm::hash_combine_range(k.second.begin(), k.second.end())));
}

Attribute ConstantCache::getOrCompute(StringRef kind, ArrayRef<Attribute> key,
                                      llvm::function_ref<Attribute()> compute) {
  Key k{kind.str(), {}};
  for (Attribute a : key)
    k.second.push_back(a.getAsOpaquePointer());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(k);
    if (it != entries.end()) {
      ++hitCount;
      return it->second;
    }
  }
  // Computed outside the lock: two programs may compute one entry at once; both get the same
  // uniqued attribute.
  Attribute result = compute();
  if (result) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.try_emplace(std::move(k), result);
  }
  return result;
}

size_t ConstantCache::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return entries.size();
}

size_t ConstantCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex);
  return hitCount;
}

MutableArrayRef<char> kiln::scratchBytes(size_t bytes) {
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  thread_local Buffer kept, oversize;
  oversize = Buffer(); // the previous call's buffer above kMaxScratchBytes
  if (bytes > kMaxScratchBytes) {
    oversize.data.reset(new char[bytes]);
    oversize.size = bytes;
    return {oversize.data.get(), bytes};
  }
  if (bytes > kept.size) {
    kept.data.reset(new char[bytes]);
    kept.size = bytes;
  }
  return {kept.data.get(), bytes};
}
