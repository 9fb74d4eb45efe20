// TargetTableTest.cpp - numbers the planner derives from the target table (dialects/kiln/
// KilnTarget.h): the thread-block clusters surely resident at once (the few-row GEMM's split-K
// depends on it) and the roofline estimate of a launch (the prefill plan's costs).
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnTarget.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {
TargetAttr target(mlir::MLIRContext &context, const char *name) {
  context.loadDialect<KilnDialect>();
  mlir::FailureOr<TargetAttr> t = getTarget(&context, name);
  EXPECT_TRUE(mlir::succeeded(t)) << name;
  return *t;
}
} // namespace

// sm_90 (132 SMs in 8 GPCs): each GPC may leave up to size - 1 slots empty. The H200's ncu "Max
// Active Clusters" (session 23) is at or above each bound: 30 (8 blocks, 2 per SM), 47 (5, 2),
// 62 (8, 4) and 62 (6, 3).
TEST(TargetTable, ResidentClustersAreALowerBoundPerGpc) {
  mlir::MLIRContext context;
  TargetAttr sm90 = target(context, "sm_90");
  EXPECT_EQ(residentClusters(sm90, 8, 2), 26);
  EXPECT_EQ(residentClusters(sm90, 5, 2), 46);
  EXPECT_EQ(residentClusters(sm90, 8, 4), 59);
  EXPECT_EQ(residentClusters(sm90, 6, 3), 59);
  EXPECT_EQ(residentClusters(sm90, 4, 2), 60);
  EXPECT_EQ(residentClusters(sm90, 2, 3), 194);
  // No cluster: every block slot.
  EXPECT_EQ(residentClusters(sm90, 1, 2), 264);
  EXPECT_EQ(residentClusters(target(context, "sm_90a"), 8, 2), 26);
  // A row without a GPC count: the slots over the cluster size.
  EXPECT_EQ(residentClusters(target(context, "sm_80"), 8, 2), 27);
  // More blocks per cluster than slots: none.
  EXPECT_EQ(residentClusters(sm90, 8, 0), 0);
}

TEST(TargetTable, LaunchEstimateIsTheRooflinePlusTheLaunchCost) {
  std::optional<TargetRates> rates = getTargetRates("sm_90");
  ASSERT_TRUE(rates.has_value());
  EXPECT_FALSE(getTargetRates("sm_91").has_value());
  // Memory-bound: 1 GB at the memory rate; compute-bound at fp16: 1 TFLOP at the tensor rate,
  // twice as long at tf32, and at the fp32 rate for fp32.
  EXPECT_NEAR(estimateLaunchSeconds(*rates, 0, 1000000000ull, Precision::FP16),
              1e9 / rates->memoryBytesPerSecond + rates->launchSeconds, 1e-12);
  const double tensor = 1e12 / rates->tensorFlopsPerSecond;
  EXPECT_NEAR(estimateLaunchSeconds(*rates, 1000000000000ull, 0, Precision::FP16),
              tensor + rates->launchSeconds, 1e-12);
  EXPECT_NEAR(estimateLaunchSeconds(*rates, 1000000000000ull, 0, Precision::TF32),
              2 * tensor + rates->launchSeconds, 1e-12);
  EXPECT_NEAR(estimateLaunchSeconds(*rates, 1000000000000ull, 0, Precision::FP32),
              1e12 / rates->fp32FlopsPerSecond + rates->launchSeconds, 1e-12);
}
