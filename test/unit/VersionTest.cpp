//===- VersionTest.cpp - kiln_version and the KILN_VERSION_* macros -------===//
//
// The library's kiln_version() equals the version macros of kiln/version.h (generated from the
// project version), as "MAJOR.MINOR.PATCH".
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(Version, LibraryVersionMatchesTheMacros) {
  const std::string expected = std::to_string(KILN_VERSION_MAJOR) + "." +
                               std::to_string(KILN_VERSION_MINOR) + "." +
                               std::to_string(KILN_VERSION_PATCH);
  ASSERT_NE(kiln_version(), nullptr);
  EXPECT_EQ(std::string(kiln_version()), expected);
  EXPECT_EQ(std::string(KILN_VERSION_STRING), expected);
}

TEST(Version, ReturnsTheSameStaticString) { EXPECT_EQ(kiln_version(), kiln_version()); }

} // namespace
