//===- InitializerCacheTest.cpp - one model's weights shared by its imports -===//
//
// No GPU needed; built with the compiler. kiln-compile imports one model several times into one
// MLIRContext (the programs of a --shape range, the two-token check); with a
// kiln::InitializerCache (ImportOptions::initializers) the imports share its initializers'
// constants: the second import finds every weight the first one loaded, and the constants are
// the same attributes either way.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxImporter.h"
#include "compiler/onnx/OnnxProto.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

/// The model of test/models (a tiny Llama with cache I/O): many initializers.
std::string modelPath() {
  return std::string(KILN_SOURCE_DIR) + "/test/models/llama_tiny_causal_past_dynamo.onnx";
}

/// The constants of `module`'s function, in order.
SmallVector<Attribute> constants(ModuleOp module) {
  SmallVector<Attribute> out;
  module.walk([&](kiln::ConstantOp c) { out.push_back(c.getValue()); });
  return out;
}

TEST(InitializerCache, SecondImportFindsEveryWeight) {
  MLIRContext context;
  std::shared_ptr<const onnx::ModelProto> model = kiln::loadOnnxModel(context, modelPath());
  ASSERT_TRUE(model);
  kiln::InitializerCache cache;
  kiln::ImportOptions options;
  options.emptyPast = true;
  options.derivePositionIds = true;
  options.initializers = &cache;
  kiln::InputShapes decode = {{"input_ids", {1, 1}}}, prefill = {{"input_ids", {1, 4}}};
  OwningOpRef<ModuleOp> a = kiln::importOnnxModel(context, modelPath(), *model, decode, options);
  ASSERT_TRUE(a);
  // Every initializer the import read is in the cache.
  int cached = 0;
  for (const onnx::TensorProto &t : model->graph().initializer())
    cached += bool(cache.lookup(t.name()));
  EXPECT_GT(cached, 10);
  OwningOpRef<ModuleOp> b = kiln::importOnnxModel(context, modelPath(), *model, prefill, options);
  ASSERT_TRUE(b);
  // The weights of both imports are the same uniqued attributes, and the same as an import
  // without the cache makes.
  kiln::ImportOptions plain = options;
  plain.initializers = nullptr;
  OwningOpRef<ModuleOp> c = kiln::importOnnxModel(context, modelPath(), *model, prefill, plain);
  ASSERT_TRUE(c);
  EXPECT_EQ(constants(*b), constants(*c));
  for (const onnx::TensorProto &t : model->graph().initializer()) {
    if (DenseElementsAttr v = cache.lookup(t.name())) {
      EXPECT_EQ(v.getNumElements(), [&] {
        int64_t n = 1;
        for (int64_t d : t.dims())
          n *= d;
        return n;
      }()) << t.name();
    }
  }
}

} // namespace
