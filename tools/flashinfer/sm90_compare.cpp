// planner_compare --sm90 (sm90_compare.hpp): random PrefillSM90Plan inputs, every part the plan
// writes compared slot by slot (allocated slots never written included), the part offsets, and the
// refusals: both must raise on the same inputs, a workspace overflow on the same part. The stream is
// seeded apart from the decode / prefill ones, so their seeds draw what they drew before.
#include "tools/flashinfer/sm90_compare.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "core/backends/fi_prefill_sm90.hpp"
#include "tools/flashinfer/planner_case.hpp"

namespace planner_compare {
namespace {

using namespace headroom;

constexpr int64_t ample = (int64_t{1} << 28) - 4096;  // within fi_side.cu's page-locked buffer

std::mt19937_64 rng;
int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
int64_t skewed(int64_t hi) {  // log-uniform in [1, hi]
  return std::min<int64_t>(hi, std::exp(std::uniform_real_distribution<double>(0, std::log(hi + 1.0))(rng)));
}
template <class T>
T pick(std::initializer_list<T> xs) {
  return *(xs.begin() + uniform(0, static_cast<int64_t>(xs.size()) - 1));
}

fi_prefill_sm90_plan mirror_plan(const sm90_input& in) {
  flashinfer_options o;
  o.cuda_graph = in.cuda_graph, o.page_size = in.page_size, o.device.num_sms = in.num_sms;
  o.total_num_rows = in.total_num_rows;
  return plan_fi_prefill_sm90(in.num_qo_heads, in.num_kv_heads, in.head_dim_vo, batch{in.kv_lens, in.q_lens},
                              o, in.causal);
}

// Three regimes: mixed batches; thousands of short requests and a few very long ones (both past
// 4096 works a head: one schedule for all heads). Graph inputs may pad total_num_rows, or fall
// short of the batch's rows (the parts then hold fewer works than are written).
sm90_input draw() {
  sm90_input in;
  in.num_kv_heads = uniform(1, 8);
  in.num_qo_heads = in.num_kv_heads * pick<int64_t>({1, 2, 3, 4, 6, 8}) + (coin(0.03) ? 1 : 0);
  in.head_dim_vo = pick<int64_t>({64, 128, 256, 64, 128});
  in.head_dim_qk = in.head_dim_vo == 128 && coin(0.2) ? 192 : in.head_dim_vo;
  in.page_size = pick<int64_t>({1, 16, 32});
  in.num_sms = pick<int64_t>({132, 132, 78, 114, 16, 1});
  in.causal = coin(0.6);
  in.cuda_graph = coin(0.5);
  const double regime = std::uniform_real_distribution<double>(0, 1)(rng);
  const int64_t bs = regime < 0.8 ? skewed(512) : regime < 0.9 ? uniform(3000, 6000) : skewed(8);
  for (int64_t i = 0; i < bs; ++i) {
    int64_t kv = coin(0.03) ? 0 : skewed(65536), q = 0;
    if (regime < 0.8)
      q = coin(0.03) ? 0 : coin(0.1) ? skewed(4096) : std::min(kv, skewed(4096));
    else if (regime < 0.9)
      q = pick<int64_t>({1, 1, 2, 4});
    else
      q = uniform(100000, 400000), kv += q;
    in.kv_lens.push_back(kv), in.q_lens.push_back(q);
    in.total_num_rows += q;
  }
  if (in.cuda_graph && coin(0.3)) in.total_num_rows += skewed(std::max<int64_t>(in.total_num_rows, 1));
  if (in.cuda_graph && in.total_num_rows > 1 && coin(0.05))
    in.total_num_rows -= uniform(1, in.total_num_rows - 1);
  in.int_workspace_bytes = ample;
  if (coin(0.18)) {  // near the end of the parts, or short of an earlier one
    try {
      const int64_t need = fi_int_workspace_bytes(mirror_plan(in));
      in.int_workspace_bytes = std::max<int64_t>(0, coin(0.8) ? need + uniform(-48, 48) : uniform(0, need));
    } catch (const std::exception&) {
    }
  }
  return in;
}

// What a refusal says: the part an overflow names, or just that the planner raised.
std::string refusal_of_flashinfer(const std::string& what) {
  const std::string key = "allocating memory for ";
  const auto at = what.find(key);
  if (at == std::string::npos) return "raised";
  const auto end = what.find(' ', at + key.size());
  return "overflow:" + what.substr(at + key.size(), end - at - key.size());
}

std::vector<int32_t> slots(std::vector<int32_t> v, int64_t n) {
  v.resize(static_cast<std::size_t>(n), sentinel);  // written past the part: its own slots only
  return v;
}

struct counts {
  int64_t inputs = 0, agree = 0, both_refuse = 0, disagree = 0, past_parts = 0, same_schedule = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> fields;  // name -> (agree, total)
  std::map<std::string, int64_t> refusals;
  std::string first;
  bool ok = true;
  void field(const std::string& name, bool same, const std::string& where) {
    auto& f = fields[name];
    f.first += same, f.second += 1;
    if (!same) ok = false;
    if (!same && first.empty()) first = name + " differs on " + where;
  }
};

std::string describe(const sm90_input& in) {
  std::string s = "qo " + std::to_string(in.num_qo_heads) + " kv " + std::to_string(in.num_kv_heads) +
                  " Dqk " + std::to_string(in.head_dim_qk) + " Dvo " + std::to_string(in.head_dim_vo) +
                  " page " + std::to_string(in.page_size) + " sms " + std::to_string(in.num_sms) +
                  " causal " + std::to_string(in.causal) + " graph " + std::to_string(in.cuda_graph) +
                  " rows " + std::to_string(in.total_num_rows) + " int_ws " +
                  std::to_string(in.int_workspace_bytes) + " B " + std::to_string(in.kv_lens.size()) +
                  " kv/q:";
  for (std::size_t i = 0; i < in.kv_lens.size() && i < 16; ++i)
    s.append(" ").append(std::to_string(in.kv_lens[i])).append("/").append(std::to_string(in.q_lens[i]));
  return s + (in.kv_lens.size() > 16 ? " ..." : "");
}

void compare(const sm90_input& in, counts& c) {
  std::string fi_refusal, mirror_refusal;
  sm90_result a;
  fi_prefill_sm90_plan m;
  try {
    a = flashinfer_plan_sm90(in);
  } catch (const std::exception& e) {
    fi_refusal = refusal_of_flashinfer(e.what());
  }
  try {
    m = mirror_plan(in);
    const std::string part = fi_int_workspace_overflow(m, in.int_workspace_bytes);
    if (!part.empty()) mirror_refusal = "overflow:" + part;
  } catch (const std::exception&) {
    mirror_refusal = "raised";
  }
  ++c.inputs;
  const std::string where = describe(in);
  c.ok = true;
  c.field("planner_error", fi_refusal == mirror_refusal,
          where + " [flashinfer: " + fi_refusal + "] [mirror: " + mirror_refusal + "]");
  if (fi_refusal.empty() && mirror_refusal.empty()) {
    c.past_parts += m.works_past_parts(), c.same_schedule += m.same_schedule_for_all_heads;
    std::vector<int64_t> offsets;
    for (const auto& part : fi_int_workspace_parts(m)) offsets.push_back(part.offset);
    const int64_t n = (m.allocated_works + 3) / 4 * 4;  // the slots up to the next part's alignment
    c.field("same_schedule_for_all_heads", a.same_schedule_for_all_heads == m.same_schedule_for_all_heads,
            where);
    c.field("part_offsets", a.part_offsets == offsets, where);
    c.field("work_indptr", a.work_indptr == m.work_indptr, where);
    c.field("qo_tile_indices", a.qo_tile_indices == slots(m.qo_tile_indices, n), where);
    c.field("qo_indptr", a.qo_indptr == slots(m.qo_indptr, n), where);
    c.field("kv_indptr", a.kv_indptr == slots(m.kv_indptr, n), where);
    c.field("qo_len", a.qo_len == slots(m.qo_len, n), where);
    c.field("kv_len", a.kv_len == slots(m.kv_len, n), where);
    c.field("head_indices", a.head_indices == slots(m.head_indices, n), where);
    c.field("batch_indices", a.batch_indices == slots(m.batch_indices, n), where);
  } else if (fi_refusal == mirror_refusal) {
    ++c.refusals[fi_refusal.substr(0, fi_refusal.find(':'))];
  }
  if (!c.ok)
    ++c.disagree;
  else if (fi_refusal.empty())
    ++c.agree;
  else
    ++c.both_refuse;
}

}  // namespace

int run_sm90(int64_t inputs, uint64_t seed) {
  rng.seed(seed ^ 0x5d90a3f1c2b4e687ULL);
  counts c;
  for (int64_t i = 0; i < inputs; ++i) compare(draw(), c);
  std::printf("prefill SM90 (PrefillSM90Plan): %lld inputs, %lld agree, %lld both refuse, %lld disagree\n",
              static_cast<long long>(c.inputs), static_cast<long long>(c.agree),
              static_cast<long long>(c.both_refuse), static_cast<long long>(c.disagree));
  for (const auto& [f, n] : c.fields)
    std::printf("  %-28s %lld / %lld\n", f.c_str(), static_cast<long long>(n.first),
                static_cast<long long>(n.second));
  for (const auto& [kind, n] : c.refusals)
    std::printf("  both refuse (%s): %lld\n", kind.c_str(), static_cast<long long>(n));
  std::printf("  planned with one schedule for all heads: %lld; works past the parts: %lld\n",
              static_cast<long long>(c.same_schedule), static_cast<long long>(c.past_parts));
  if (!c.first.empty()) std::printf("  FIRST DISAGREEMENT: %s\n", c.first.c_str());
  std::printf("%s\n", c.disagree == 0 ? "AGREE: every field of every input" : "DISAGREE");
  return c.disagree == 0 ? 0 : 1;
}

int self_test_sm90() {
  sm90_input in;
  in.num_qo_heads = 8, in.num_kv_heads = 2, in.int_workspace_bytes = ample;
  in.kv_lens = {100, 2000, 17}, in.q_lens = {10, 200, 17}, in.total_num_rows = 227;
  int answered = 0;
  for (bool causal : {false, true}) {
    in.causal = causal;
    try {
      flashinfer_plan_sm90(in);
      if (mirror_plan(in).total_works > 0) ++answered;
    } catch (const std::exception& e) {
      std::printf("  %s: %s\n", describe(in).c_str(), e.what());
    }
  }
  std::printf("self-test: %d / 2 PrefillSM90Plan inputs answered by both planners (not compared)\n",
              answered);
  return answered == 2 ? 0 : 1;
}

}  // namespace planner_compare
