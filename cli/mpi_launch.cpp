// Recognising an MPI launcher from the environment it gives its ranks (mpi_launch.hpp).
#include "cli/mpi_launch.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace headroom::cli {

namespace {

std::optional<int> env_int(const char* name, long lo) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end || n < lo || n > 1 << 24) return std::nullopt;  // 2^24 ranks: past any machine
  return static_cast<int>(n);
}

}  // namespace

bool under_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (const char* e = std::getenv(v); e && *e) return true;
  return false;
}

std::optional<int> mpi_size_from_env() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (auto n = env_int(v, 1)) return n;
  return std::nullopt;
}

std::optional<int> mpi_rank_from_env() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (auto n = env_int(v, 0)) return n;
  return std::nullopt;
}

std::string gpu_of_rank(const std::string& visible, int local_rank, int node_gpus) {
  std::vector<std::string> ids;
  std::size_t at = 0;
  while (at <= visible.size()) {
    const auto comma = std::min(visible.find(',', at), visible.size());
    if (comma > at) ids.push_back(visible.substr(at, comma - at));
    at = comma + 1;
  }
  if (!ids.empty()) return ids[static_cast<std::size_t>(local_rank) % ids.size()];
  return node_gpus > 0 ? std::to_string(local_rank % node_gpus) : std::string();
}

int node_gpu_count(const char* dir) {
  std::error_code ec;
  int n = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
  return ec ? 0 : n;
}

}  // namespace headroom::cli
