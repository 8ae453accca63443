// The readable plan: per rank and attention group the layers and their heads, then per backend
// the builder's parameters and each buffer's dtype, shape and bytes. Names that came from the
// input go through one_line.
#include <cstdio>
#include <set>

#include "cli/commands.hpp"
#include "core/util/one_line.hpp"

namespace headroom::cli {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// "48" or "48, 64": the distinct per-rank head counts of the group's layers.
std::string layer_heads(const builder_dump& d, const registry& reg) {
  std::set<int64_t> heads;
  for (const auto& n : d.layers)
    if (const rank_layer* l = reg.find(n)) heads.insert(l->num_heads);
  std::string s;
  for (int64_t h : heads) s += (s.empty() ? "" : ", ") + std::to_string(h);
  return s;
}

void print_group(const builder_dump& d, const registry& reg) {
  const rank_layer* first = reg.find(d.layers.front());
  std::printf(
      "  %s group %d (kv-cache group %d): %zu layers (%s .. %s), layer heads %s, kv heads %lld, head size "
      "%lld\n",
      to_string(d.be), d.index, d.kv_group, d.layers.size(), one_line(d.layers.front(), 200).c_str(),
      one_line(d.layers.back(), 200).c_str(), layer_heads(d, reg).c_str(),
      first ? (long long)first->num_kv_heads : 0LL, first ? (long long)first->head_size : 0LL);
  std::string params;
  for (const auto& [k, v] : d.parameters) params += " " + k + "=" + std::to_string(v);
  std::printf("    parameters:%s\n", one_line(params, 4096).c_str());
  for (const auto& b : d.buffers)
    std::printf("    %-24s %-9s %-22s %14lld B\n", one_line(b.name, 200).c_str(), b.dtype.c_str(),
                shape_text(b.shape).c_str(), (long long)b.bytes);
}

}  // namespace

void print_plan(const plan_file& p, const std::string& title) {
  std::printf("%s\n", one_line(title, 4096).c_str());
  std::printf(
      "engine: max_num_seqs %lld, max_model_len %lld, max_num_batched_tokens %lld, block size %lld, "
      "cudagraph %s\n",
      (long long)p.engine.max_num_seqs, (long long)p.engine.max_model_len,
      (long long)p.engine.max_num_batched_tokens, (long long)p.block_size, to_string(p.engine.cg_mode));
  for (const auto& r : p.ranks) {
    const registry reg = make_registry(to_rank(p.model, r.tp));
    std::printf("\ntp %lld\n", (long long)r.tp);
    for (const auto& d : r.groups) print_group(d, reg);
  }
  for (const auto& n : p.notes) std::printf("note: %s\n", one_line(n, 4096).c_str());
  std::fflush(stdout);
}

}  // namespace headroom::cli
