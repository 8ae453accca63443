// The main() of the GPU lane's test programs: without a device they exit 77, which CTest counts as
// skipped (label gpu), and otherwise run their GoogleTest tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>

#include "targets/gpu/gpu_executor.hpp"

int main(int argc, char** argv) {
  if (headroom::gpu_device_count() == 0) {
    std::printf("no GPU device: the gpu lane is skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
