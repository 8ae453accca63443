// Launching under MPI without MPI (cli/mpi_launch.hpp): which launcher environments are seen, and
// which GPU each node-local rank gets for --target gpu (N GPUs planned, tested here without one).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/mpi_launch.hpp"

namespace {

using headroom::cli::gpu_of_rank;

TEST(MpiLaunch, OneGpuPerLocalRank) {
  EXPECT_EQ(gpu_of_rank("", 0), "0");  // nothing set: the device numbered by the local rank
  EXPECT_EQ(gpu_of_rank("", 5), "5");
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 0), "4");  // a list: the local rank's entry
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 3), "7");
  EXPECT_EQ(gpu_of_rank("4,5,6,7", 6), "6");                   // more ranks than GPUs: modulo the list
  EXPECT_EQ(gpu_of_rank("3", 2), "3");                         // Slurm --gpus-per-task=1: kept
  EXPECT_EQ(gpu_of_rank("GPU-1a2b,GPU-3c4d", 1), "GPU-3c4d");  // UUIDs as well
  EXPECT_EQ(gpu_of_rank(",2,,3,", 1), "3");                    // empty entries ignored
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
