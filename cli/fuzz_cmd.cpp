// headroom fuzz [--seed S] [--cases N | --time 60s] [--target sim|gpu|model] [--policy P]
//               [--grouping G] [--backend triton|flashinfer|fa3|all] [--out DIR] [--jobs N]
//               [--stop-after K] [--tp 1,2,4,8] [engine settings] [--engine-args FILE]
// Random cases from the property generators, shrunk counterexamples to DIR as they are found; an
// engine setting given (flag or --engine-args) is pinned: every case has it instead of a draw.
// Exit 1 when anything was found, 0 when clean, 2 on bad input (docs/design.md).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/fuzz_campaign.hpp"
#include "cli/output_file.hpp"
#include "core/util/error.hpp"
#include "generators/geometry_gen.hpp"

namespace headroom::cli {

namespace {

uint64_t fresh_seed() {
  const auto t = std::chrono::system_clock::now().time_since_epoch().count();
  return static_cast<uint64_t>(t) ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
}

}  // namespace

void prepare_fuzz_out(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw input_error(cmdline, "--out", "\"" + dir + "\"", "exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw input_error(cmdline, "--out", "\"" + dir + "\"", "cannot be created: " + ec.message());
  probe_folder("--out", dir);
  if (const int n = remove_stale_temporaries(dir))
    std::fprintf(stderr, "fuzz: removed %d temporary file%s left in %s by a campaign that was killed\n", n,
                 n == 1 ? "" : "s", dir.c_str());
}

namespace {

void read_profile(const parsed_args& a, fuzz_options& o) {
  auto& p = o.profile;
  if (auto v = a.get("--policy")) p.policies = {parse_policy(*v, cmdline, "--policy")};
  if (auto v = a.get("--grouping")) p.groupings = {parse_grouping(*v, cmdline, "--grouping")};
  if (auto v = a.get("--backend"); v && *v != "all") p.backends = {parse_backend(*v, cmdline, "--backend")};
  if (auto v = a.get("--kv-layout")) p.kv_layouts = {parse_kv_layout(*v, cmdline, "--kv-layout")};
  p.mutants = mutants_of(a);
  const engine_flag_settings given =
      read_attributed(a, [&] { return read_engine_settings(a, std::nullopt, generators::max_generated_tp); });
  p.pins = given.pins;
  o.sglang_pins = given.sglang;
  o.profile_flags = std::string("--policy ") + to_string(p.policies.front()) + " --grouping " +
                    to_string(p.groupings.front()) + " --backend " +
                    (p.backends.size() == 1 ? to_string(p.backends.front()) : "all");
  if (p.kv_layouts.size() == 1)
    o.profile_flags += std::string(" --kv-layout ") + to_string(p.kv_layouts.front());
  for (const auto& m : p.mutants) o.profile_flags += " --mutant " + m;
  o.profile_flags += flags_of(p.pins) + flags_of(o.sglang_pins);
}

}  // namespace

fuzz_options read_fuzz_options(int argc, char** argv) {
  auto a = parse(argc, argv, command("fuzz"));
  if (!a.positional.empty())
    throw input_error(cmdline, a.positional.front(), "(argument)", "fuzz takes no positional arguments");
  if (a.has("--cases") && a.has("--time"))
    throw input_error(cmdline, "--time", *a.get("--time"), "give --cases or --time, not both");
  merge_engine_args(a, command("fuzz"));
  fuzz_options o;
  o.seed = a.has("--seed") ? to_seed("--seed", *a.get("--seed")) : fresh_seed();
  if (auto v = a.get("--cases")) o.cases = to_int("--cases", *v, 1, int64_t{1} << 40);
  if (auto v = a.get("--time")) o.seconds = to_seconds("--time", *v);  // more than 0 s, decimal
  if (!o.cases && !o.seconds) o.cases = 1000;
  if (auto v = a.get("--stop-after")) o.stop_after = to_int("--stop-after", *v, 1, 1 << 20);
  if (auto v = a.get("--jobs")) o.jobs = static_cast<int>(to_int("--jobs", *v, 1, 1024));
  o.target = a.get("--target").value_or("sim");
  read_profile(a, o);
  o.kv_cache_given = a.get("--kv-cache-dtype").value_or("");
  o.profile.formulas_only = o.target == "model";
  if (auto v = a.get("--out")) o.out = *v;
  return o;
}

int fuzz_main(int argc, char** argv) {
  fuzz_options o = read_fuzz_options(argc, argv);
  require_fa2_prefill_off_model(o.profile.pins.prefill_sm90.value_or(false), o.target, cmdline,
                                "--flashinfer-prefill");
  require_auto_fa2_off_model(o.profile.pins.prefill_auto.value_or(false), o.target, cmdline,
                             "--flashinfer-prefill");
  require_cache_modelled(o.profile.pins.kv_cache.value_or(kv_quant::none), o.kv_cache_given, o.target,
                         o.profile.backends, cmdline, "--kv-cache-dtype");
  make_executor(o.target);  // a target that cannot run here is bad input, before any output
  if (o.out) prepare_fuzz_out(*o.out);
  const fuzz_summary s = run_fuzz(o);  // says the seed on stderr once its jobs have started
  print_fuzz_summary(o, s);
  return s.found.empty() ? 0 : 1;
}

}  // namespace headroom::cli
