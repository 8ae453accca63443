// gtest main for the property suites: prints the profile and the seed before any property runs.
#include <gtest/gtest.h>

#include "properties/support/prop_check.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  headroom::props::init_profile(argc, argv);
  return RUN_ALL_TESTS();
}
