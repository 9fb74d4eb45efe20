//===- ConstantCacheTest.cpp - weight transforms shared across programs --===//
//
// No GPU needed; built with the compiler. kiln::ConstantCache computes each (transform, inputs)
// once per MLIRContext; kiln-assign-precision on two copies of a function (two programs of a
// --shape range) converts each weight once and gives both the same attribute.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/ConstantCache.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

TEST(ConstantCache, ComputesOncePerKindAndKey) {
  MLIRContext context;
  context.loadDialect<kiln::KilnDialect>();
  kiln::ConstantCache &cache = kiln::ConstantCache::get(&context);
  Builder b(&context);
  Attribute one = b.getI64IntegerAttr(1), two = b.getI64IntegerAttr(2);
  int calls = 0;
  auto compute = [&]() -> Attribute {
    ++calls;
    return b.getStringAttr("result" + std::to_string(calls));
  };
  Attribute first = cache.getOrCompute("kind-a", {one, two}, compute);
  EXPECT_EQ(cache.getOrCompute("kind-a", {one, two}, compute), first);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.hits(), 1u);
  // Another order, another kind: other entries.
  EXPECT_NE(cache.getOrCompute("kind-a", {two, one}, compute), first);
  EXPECT_NE(cache.getOrCompute("kind-b", {one, two}, compute), first);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.size(), 3u);
  // A failed transform (null) is not stored.
  EXPECT_FALSE(cache.getOrCompute("kind-c", {one}, [] { return Attribute(); }));
  EXPECT_EQ(cache.size(), 3u);
}

TEST(ConstantCache, AssignPrecisionConvertsAWeightOnceForTwoPrograms) {
  MLIRContext context;
  context.loadDialect<kiln::KilnDialect, func::FuncDialect>();
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
      %w = kiln.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 1.5, 2.5, 3.5],
        [4.5, 5.5, 6.5, 7.5], [8.5, 9.5, 0.25, 0.5], [0.75, 1.25, 1.75, 2.25],
        [2.75, 3.25, 3.75, 4.25], [4.75, 5.25, 5.75, 6.25]]> : tensor<8x4xf32>
      %y = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
      return %y : tensor<2x4xf32>
    })mlir";
  OwningOpRef<ModuleOp> first = parseSourceString<ModuleOp>(source, &context);
  OwningOpRef<ModuleOp> second = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(first && second);
  kiln::ConstantCache &cache = kiln::ConstantCache::get(&context);
  const size_t hitsBefore = cache.hits();
  IRRewriter rewriter(&context);
  auto weightOf = [&](ModuleOp module) {
    auto func = *module.getOps<func::FuncOp>().begin();
    EXPECT_TRUE(succeeded(kiln::assignPrecision(rewriter, func, kiln::Precision::FP16)));
    return (*func.getOps<kiln::ConstantOp>().begin()).getValue();
  };
  Attribute w1 = weightOf(*first), w2 = weightOf(*second);
  EXPECT_EQ(w1, w2);
  EXPECT_TRUE(cast<ElementsAttr>(w1).getElementType().isF16());
  EXPECT_EQ(cache.hits(), hitsBefore + 1); // the second program's weight came from the cache
}

} // namespace

// kiln::scratchBytes: one buffer per thread, reused by smaller requests (no fresh pages per
// weight), grown by larger ones; a request above kMaxScratchBytes gets a buffer of its own.
TEST(ScratchBytes, ReusedPerThread) {
  llvm::MutableArrayRef<char> a = kiln::scratchBytes(1 << 20);
  ASSERT_EQ(a.size(), size_t(1) << 20);
  a[0] = 'x';
  a.back() = 'y';
  llvm::MutableArrayRef<char> b = kiln::scratchBytes(1000);
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(b.size(), 1000u);
  llvm::MutableArrayRef<char> c = kiln::scratchBytes(size_t(2) << 20);
  EXPECT_EQ(c.size(), size_t(2) << 20);
  c.back() = 'z'; // grown: all of it is writable
  llvm::MutableArrayRef<char> big = kiln::scratchBytes(kiln::kMaxScratchBytes + 1);
  EXPECT_NE(big.data(), c.data());
  big.back() = 'w';
  // After the oversize request, the kept buffer is still the grown one.
  EXPECT_EQ(kiln::scratchBytes(16).data(), c.data());
}
