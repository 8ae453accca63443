// planner_compare: random planner inputs through FlashInfer's own planners (fi_side.cu) and headroom's
// mirror (core/backends/fi_*.cpp), every field a kernel reads compared, padded slots included.
//   planner_compare [decode_inputs] [prefill_inputs] [seed] [exact-grid]
//   planner_compare --self-test
//   planner_compare --sm90 [inputs] [seed]   (PrefillSM90Plan, the FA3 planner: sm90_compare.cpp)
// exact-grid runs the mirror with the proposed exact no-split graph grid (PR 4430), which FlashInfer
// does not have: it must disagree (padded_batch_size), which shows the driver able to fail.
// Prints per-field agreement counts and the first disagreeing input; exit 1 on any disagreement.
// --self-test runs four fixed inputs (and two of PrefillSM90Plan) through both sides without
// comparing them (exit 0 when both answer each): it shows a build links and runs, whatever
// scheduler.cuh it has (tests/tools/ uses a stub).
// docs/flashinfer-planner.md: the input ranges and what to do when FlashInfer's signatures change.
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "core/backends/flashinfer.hpp"
#include "tools/flashinfer/planner_case.hpp"
#include "tools/flashinfer/sm90_compare.hpp"

namespace pc = planner_compare;
using namespace headroom;

namespace {

std::mt19937_64 rng;
// The options added after the agreement tables of docs/flashinfer-planner.md (POD's colocated CTAs,
// a window on decode inputs) come from their own stream, so that a seed draws the same inputs as
// before apart from them.
std::mt19937_64 rng_extra;
bool exact_grid = false;
int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
bool extra(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_extra) < p; }
// Log-uniform in [1, hi]: short values common, long ones present.
int64_t skewed(int64_t hi) {
  return std::min<int64_t>(hi, std::exp(std::uniform_real_distribution<double>(0, std::log(hi + 1.0))(rng)));
}
template <class T>
T pick(std::initializer_list<T> xs) {
  return *(xs.begin() + uniform(0, static_cast<int64_t>(xs.size()) - 1));
}

pc::input draw(bool prefill) {
  pc::input in;
  in.prefill = prefill;
  in.num_kv_heads = uniform(1, 8);
  in.num_qo_heads = in.num_kv_heads * pick<int64_t>({1, 2, 3, 4, 6, 8});
  in.head_dim =
      prefill ? pick<int64_t>({64, 128, 256, 64, 128, 256, 96, 192, 512}) : pick<int64_t>({64, 128, 256});
  in.page_size = pick<int64_t>({1, 16, 32});
  in.num_sms = pick<int64_t>({132, 132, 78, 108, 170, 16});
  in.blocks_per_sm = uniform(1, 8);
  in.cuda_graph = coin(0.5);
  const int64_t bs = skewed(512);
  const bool tensor_core_decode = prefill && coin(0.35);
  const int64_t uniform_q = tensor_core_decode ? (coin(0.7) ? 1 : uniform(2, 4)) : 0;
  for (int64_t i = 0; i < bs; ++i) {
    const int64_t kv = skewed(65536);
    in.kv_lens.push_back(kv);
    in.q_lens.push_back(!prefill             ? 1
                        : tensor_core_decode ? std::min(kv, uniform_q)
                                             : std::min(kv, skewed(4096)));
  }
  if (tensor_core_decode)  // decode.py: uniform_q_len = q_len_per_req if > 1 else 0; every kv >= q
    for (auto& kv : in.kv_lens) kv = std::max(kv, uniform_q);
  if (tensor_core_decode)
    for (auto& q : in.q_lens) q = uniform_q;
  in.uniform_q_len = uniform_q > 1 ? uniform_q : 0;
  if (prefill) {
    if (coin(0.25)) in.window_left = skewed(8192) - 1;
    in.disable_split_kv = coin(0.2);
    if (!in.disable_split_kv && coin(0.1)) in.fixed_split_size = skewed(256);
    // POD attention: PrefillPlanImpl's budget max(0, 2 * SMs - colocated) / KV, past the device too.
    if (extra(0.2))
      in.num_colocated_ctas = std::uniform_int_distribution<int64_t>(1, 2 * in.num_sms + 8)(rng_extra);
  } else if (extra(0.25)) {
    // The mirror's decode plan must ignore it, as DecodePlanImpl (no window parameter) does.
    in.window_left = std::uniform_int_distribution<int64_t>(0, 8191)(rng_extra);
  }
  for (int64_t q : in.q_lens) in.total_num_rows += q;
  if (prefill && in.cuda_graph && in.uniform_q_len == 0 && coin(0.3))
    in.total_num_rows += skewed(in.total_num_rows);
  return in;
}

std::vector<int32_t> widen(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }
std::vector<int32_t> padded_to(std::vector<int32_t> v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n, pc::sentinel);
  return v;
}
int64_t round16(int64_t x) { return (x + 15) / 16 * 16; }

pc::result mirror(const pc::input& in) {
  batch b{in.kv_lens, in.q_lens};
  flashinfer_options o;
  o.cuda_graph = in.cuda_graph;
  o.page_size = in.page_size;
  o.window_left = in.window_left;
  o.num_colocated_ctas = in.num_colocated_ctas;
  o.disable_split_kv = in.disable_split_kv;
  o.fixed_split_size = in.fixed_split_size;
  o.uniform_q_len = in.uniform_q_len;
  o.total_num_rows = in.total_num_rows;
  o.exact_no_split_graph_grid = exact_grid;  // FlashInfer has not the fix (docs/flashinfer-planner.md)
  o.device.num_sms = in.num_sms;
  o.device.blocks_by_head[{in.num_qo_heads / in.num_kv_heads, in.head_dim}] = in.blocks_per_sm;
  pc::result r;
  if (in.prefill) {
    const fi_prefill_plan p = plan_fi_prefill(in.num_qo_heads, in.num_kv_heads, in.head_dim, b, o);
    r.split_kv = p.split_kv, r.cta_tile_q = p.cta_tile_q, r.kv_chunk_size = p.kv_chunk_size;
    r.padded_batch_size = p.padded_batch_size, r.new_batch_size = p.new_batch_size;
    r.total_num_rows = p.total_num_rows;
    r.request_indices = p.request_indices, r.qo_tile_indices = p.qo_tile_indices;
    r.kv_tile_indices = p.kv_tile_indices, r.o_indptr = p.o_indptr;
    r.has_merge_indptr = !p.merge_indptr.empty(), r.merge_indptr = p.merge_indptr;
    r.has_block_valid_mask = !p.block_valid_mask.empty(), r.block_valid_mask = widen(p.block_valid_mask);
    if (p.split_kv)
      r.tmp_v_bytes = round16(p.buffers[0].capacity_bytes), r.tmp_s_bytes = p.buffers[1].capacity_bytes;
    return r;
  }
  const fi_decode_plan p = plan_fi_decode(in.num_qo_heads, in.num_kv_heads, in.head_dim, dtype::bf16, b, o);
  r.split_kv = p.split, r.kv_chunk_size = p.kv_chunk_size, r.padded_batch_size = p.padded;
  r.new_batch_size = p.num_work;
  r.request_indices = p.request_indices, r.kv_tile_indices = p.kv_tile_indices;
  r.o_indptr = padded_to(p.o_indptr, p.padded + 1);  // P + 1 allocated, B + 1 written
  r.has_block_valid_mask = !p.block_valid_mask.empty(), r.block_valid_mask = widen(p.block_valid_mask);
  if (p.split)
    r.tmp_v_bytes = round16(p.buffers[0].capacity_bytes), r.tmp_s_bytes = p.buffers[1].capacity_bytes;
  return r;
}

struct tally {
  std::map<std::string, std::pair<int64_t, int64_t>> fields;  // name -> (agree, total)
  std::string first;
  void add(const std::string& name, bool ok, const std::string& where) {
    auto& f = fields[name];
    f.first += ok, f.second += 1;
    if (!ok && first.empty()) first = name + " differs on " + where;
  }
};

std::string describe(const pc::input& in) {
  std::string s = std::string(in.prefill ? "prefill" : "decode") + " qo " + std::to_string(in.num_qo_heads) +
                  " kv " + std::to_string(in.num_kv_heads) + " D " + std::to_string(in.head_dim) + " page " +
                  std::to_string(in.page_size) + " sms " + std::to_string(in.num_sms) + " blocks " +
                  std::to_string(in.blocks_per_sm) + " graph " + std::to_string(in.cuda_graph) + " nosplit " +
                  std::to_string(in.disable_split_kv) + " window " + std::to_string(in.window_left) +
                  " colocated " + std::to_string(in.num_colocated_ctas) + " fixed " +
                  std::to_string(in.fixed_split_size) + " uniform " + std::to_string(in.uniform_q_len) +
                  " rows " + std::to_string(in.total_num_rows) + " B " + std::to_string(in.kv_lens.size()) +
                  " kv/q:";
  for (std::size_t i = 0; i < in.kv_lens.size() && i < 16; ++i)
    s.append(" ").append(std::to_string(in.kv_lens[i])).append("/").append(std::to_string(in.q_lens[i]));
  return s + (in.kv_lens.size() > 16 ? " ..." : "");
}

void compare(const pc::input& in, tally& t) {
  std::string fi_error, mirror_error;
  pc::result a, m;
  try {
    a = pc::flashinfer_plan(in);
  } catch (const std::exception& e) {
    fi_error = e.what();
  }
  try {
    m = mirror(in);
  } catch (const std::exception& e) {
    mirror_error = e.what();
  }
  const std::string where = describe(in);
  t.add("planner_error", fi_error.empty() == mirror_error.empty(),
        where + " [flashinfer: " + fi_error + "] [mirror: " + mirror_error + "]");
  if (!fi_error.empty() || !mirror_error.empty()) return;
  t.add("split_kv", a.split_kv == m.split_kv, where);
  if (in.prefill) t.add("cta_tile_q", a.cta_tile_q == m.cta_tile_q, where);
  t.add("kv_chunk_size", a.kv_chunk_size == m.kv_chunk_size, where);
  t.add("padded_batch_size", a.padded_batch_size == m.padded_batch_size, where);
  t.add("new_batch_size", a.new_batch_size == m.new_batch_size, where);
  if (in.prefill) t.add("total_num_rows", a.total_num_rows == m.total_num_rows, where);
  t.add("request_indices", a.request_indices == m.request_indices, where);
  if (in.prefill) t.add("qo_tile_indices", a.qo_tile_indices == m.qo_tile_indices, where);
  t.add("kv_tile_indices", a.kv_tile_indices == m.kv_tile_indices, where);
  t.add("o_indptr", a.o_indptr == m.o_indptr, where);
  if (in.prefill)
    t.add("merge_indptr", a.has_merge_indptr == m.has_merge_indptr && a.merge_indptr == m.merge_indptr,
          where);
  t.add("block_valid_mask",
        a.has_block_valid_mask == m.has_block_valid_mask && a.block_valid_mask == m.block_valid_mask, where);
  t.add("tmp_v_bytes", a.tmp_v_bytes == m.tmp_v_bytes, where);
  t.add("tmp_s_bytes", a.tmp_s_bytes == m.tmp_s_bytes, where);
}

bool report(const char* name, const tally& t, int64_t n) {
  std::printf("%s: %lld inputs\n", name, static_cast<long long>(n));
  for (const auto& [f, c] : t.fields)
    std::printf("  %-18s %lld / %lld\n", f.c_str(), static_cast<long long>(c.first),
                static_cast<long long>(c.second));
  if (!t.first.empty()) std::printf("  FIRST DISAGREEMENT: %s\n", t.first.c_str());
  return t.first.empty();
}

int self_test() {
  std::vector<pc::input> inputs;
  for (int64_t d : {64, 128, 256}) {
    pc::input in;
    in.num_qo_heads = 8, in.num_kv_heads = 2, in.head_dim = d;
    in.kv_lens = {100, 2000, 17}, in.q_lens = {1, 1, 1}, in.total_num_rows = 3;
    inputs.push_back(in);
  }
  pc::input pre = inputs[1];
  pre.prefill = true, pre.q_lens = {10, 200, 17}, pre.total_num_rows = 227;
  inputs.push_back(pre);
  int answered = 0;
  for (const pc::input& in : inputs) {
    try {
      pc::flashinfer_plan(in);
      const pc::result m = mirror(in);
      if (m.padded_batch_size > 0 && !m.request_indices.empty())
        ++answered;
      else
        std::printf("  the mirror planned nothing on %s\n", describe(in).c_str());
    } catch (const std::exception& e) {
      std::printf("  %s: %s\n", describe(in).c_str(), e.what());
    }
  }
  std::printf("self-test: %d / %zu inputs answered by both planners (not compared)\n", answered,
              inputs.size());
  return answered == static_cast<int>(inputs.size()) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("planner_compare: headroom's mirror against %s\n", pc::flashinfer_side());
  if (argc > 1 && std::string(argv[1]) == "--self-test") return self_test() | pc::self_test_sm90();
  if (argc > 1 && std::string(argv[1]) == "--sm90")
    return pc::run_sm90(argc > 2 ? std::stoll(argv[2]) : 5000, argc > 3 ? std::stoull(argv[3]) : 20261201);
  const int64_t n_decode = argc > 1 ? std::stoll(argv[1]) : 5000;
  const int64_t n_prefill = argc > 2 ? std::stoll(argv[2]) : 5000;
  const uint64_t seed = argc > 3 ? std::stoull(argv[3]) : 20261201;
  rng.seed(seed);
  rng_extra.seed(seed ^ 0x9e3779b97f4a7c15ULL);
  exact_grid = argc > 4 && std::string(argv[4]) == "exact-grid";
  tally dec, pre;
  for (int64_t i = 0; i < n_decode; ++i) compare(draw(false), dec);
  for (int64_t i = 0; i < n_prefill; ++i) compare(draw(true), pre);
  const bool ok =
      report("decode (DecodePlan)", dec, n_decode) & report("prefill (PrefillPlan)", pre, n_prefill);
  std::printf("%s\n", ok ? "AGREE: every field of every input" : "DISAGREE");
  return ok ? 0 : 1;
}
