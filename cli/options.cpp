// The options check and plan share (options.hpp).
#include "cli/options.hpp"

#include "cli/engine_flags.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

mutant_set mutants_of(const parsed_args& a) {
  return make_mutant_set(a.all("--mutant"), cmdline, "--mutant");
}

check_options options_of(const parsed_args& a) {
  return read_attributed(a, [&] {
    check_options o;
    if (auto v = a.get("--backend")) {
      if (*v == "all")
        o.backends = {backend::triton, backend::flashinfer, backend::fa3};
      else
        o.backends = {parse_backend(*v, cmdline, "--backend")};
    }
    if (auto v = a.get("--policy")) o.pol = parse_policy(*v, cmdline, "--policy");
    if (auto v = a.get("--grouping")) o.grp = parse_grouping(*v, cmdline, "--grouping");
    if (auto v = a.get("--kv-layout")) o.layout = parse_kv_layout(*v, cmdline, "--kv-layout");
    o.hybrid = !a.has("--no-hybrid");
    o.flashinfer.cuda_graph = a.has("--cuda-graph");
    o.mutants = mutants_of(a);
    read_engine_flags(a, o);  // --tp and --max-num-seqs with the other engine settings
    return o;
  });
}

}  // namespace headroom::cli
