// headroom fuzz under an MPI launcher (mpirun, srun): one campaign sharded by rank (docs/campaigns.md).
// The plain `headroom` is built without MPI, so that it runs where no MPI library is installed;
// when an MPI library is found at build time, `headroom_mpi` is built beside it with the same
// commands plus the MPI campaign. `mpirun -np N headroom fuzz ...` works with either: under a
// launcher, `headroom` hands the fuzz command over to the headroom_mpi beside it (exec, same
// process), and says in one line (exit 2) when there is none.
#pragma once

#include <optional>
#include <string>

namespace headroom::cli {

// True when an MPI launcher started this process (Open MPI's mpirun, PMIx or PMI: srun, hydra).
bool under_mpi_launcher();
// The number of ranks the launcher's environment states, when it states one; this rank's number.
std::optional<int> mpi_size_from_env();
std::optional<int> mpi_rank_from_env();

// The CUDA_VISIBLE_DEVICES of the rank `local_rank` of a node (for --target gpu, one GPU a rank):
// with a list, its entry number local_rank modulo the list's length (a single entry, as Slurm's
// --gpus-per-task=1 leaves, is kept); with none, the device numbered local_rank modulo the node's
// `node_gpus`; "" (leave every device visible) when there is no list and the count is unknown (0).
std::string gpu_of_rank(const std::string& visible, int local_rank, int node_gpus);

// The GPUs the NVIDIA driver lists on this node (an entry each in `dir`, /proc/driver/nvidia/gpus),
// without initialising CUDA; 0 when the directory cannot be read.
int node_gpu_count(const char* dir = "/proc/driver/nvidia/gpus");

// The fuzz command under a launcher: headroom execs headroom_mpi; headroom_mpi runs the campaign.
int fuzz_under_mpi(int argc, char** argv);

}  // namespace headroom::cli
