// Launching under MPI without MPI (cli/mpi_launch.hpp): which launcher environments are seen, and
// which GPU each node-local rank gets for --target gpu (N GPUs planned, tested here without one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/mpi_launch.hpp"

namespace {

using headroom::cli::gpu_of_rank;

TEST(MpiLaunch, OneGpuPerLocalRank) {
  EXPECT_EQ(gpu_of_rank("", 0, 8), "0");  // nothing set: the device numbered by the local rank
  EXPECT_EQ(gpu_of_rank("", 5, 8), "5");
  EXPECT_EQ(gpu_of_rank("", 1, 1), "0");         // two ranks on a one-GPU node share it (seen on the H200)
  EXPECT_EQ(gpu_of_rank("", 9, 8), "1");         // more ranks than the node's GPUs: modulo their count
  EXPECT_EQ(gpu_of_rank("", 3, 0), "");          // the count unknown: every device left visible
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 0, 8), "4");  // a list: the local rank's entry
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 3, 8), "7");
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 6, 8), "6");                   // more ranks than GPUs: modulo the list
  EXPECT_EQ(gpu_of_rank("3", 2, 8), "3");                         // Slurm --gpus-per-task=1: kept
  EXPECT_EQ(gpu_of_rank("GPU-1a2b,GPU-3c4d", 1, 8), "GPU-3c4d");  // UUIDs as well
  EXPECT_EQ(gpu_of_rank(",2,,3,", 1, 8), "3");                    // empty entries ignored
}

TEST(MpiLaunch, NodeGpuCountFromTheDriversDirectory) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("headroom-gpus-" + std::to_string(::getpid()));
  fs::remove_all(d);
  EXPECT_EQ(headroom::cli::node_gpu_count(d.c_str()), 0);  // no driver: unknown
  fs::create_directories(d / "0000:19:00.0");
  fs::create_directories(d / "0000:3b:00.0");
  EXPECT_EQ(headroom::cli::node_gpu_count(d.c_str()), 2);
  fs::remove_all(d);
}

TEST(MpiLaunch, LauncherEnvironments) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                        "SLURM_NTASKS", "SLURM_PROCID"})
    ::unsetenv(v);
  EXPECT_FALSE(headroom::cli::under_mpi_launcher());
  EXPECT_FALSE(headroom::cli::mpi_size_from_env());
  ::setenv("SLURM_NTASKS", "4", 1);  // a Slurm job step alone is no MPI launch
  EXPECT_FALSE(headroom::cli::under_mpi_launcher());
  ::setenv("PMIX_RANK", "2", 1);  // srun --mpi=pmix
  EXPECT_TRUE(headroom::cli::under_mpi_launcher());
  EXPECT_EQ(headroom::cli::mpi_size_from_env(), 4);
  EXPECT_EQ(headroom::cli::mpi_rank_from_env(), 2);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);  // mpirun
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_EQ(headroom::cli::mpi_size_from_env(), 2);
  EXPECT_EQ(headroom::cli::mpi_rank_from_env(), 0);
  ::setenv("OMPI_COMM_WORLD_SIZE", "two", 1);  // garbage is not a size
  EXPECT_EQ(headroom::cli::mpi_size_from_env(), 4);
}

}  // namespace
