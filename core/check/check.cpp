// Whole-model checks (headroom check) and single cases (replay, fuzz).
#include "core/check/check.hpp"

#include <cctype>
#include <memory>

#include "core/check/group_check.hpp"
#include "core/check/plans.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with every whole-word occurrence of `from` replaced by `to`.
std::string replace_word(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t k = text.find(from, i);
    if (k == std::string::npos) break;
    const bool starts = k == 0 || !ident_char(text[k - 1]);
    const bool ends = k + from.size() == text.size() || !ident_char(text[k + from.size()]);
    out += text.substr(i, k - i);
    out += starts && ends ? to : from;
    i = k + from.size();
  }
  return out + text.substr(i);
}

// A violation of dumped builders names the buffer as the dump does (softmax_segm_output, not the
// mirror's segm_output), in its buffer field and its detail.
void name_as_dumped(violation& v) {
  const std::string name = engine_buffer_name(v.be, v.buffer);
  if (v.buffer.empty() || name == v.buffer) return;
  v.detail = replace_word(v.detail, v.buffer, name);
  v.buffer = name;
}

// A few prefill and mixed batches next to the decode sweep. Executors that run the kernels get
// shorter ones (same regimes: one long prefill, chunked prefill past a kv chunk, decode + prefill).
std::vector<batch> extra_batches(int64_t seq_len, bool exhaustive) {
  const int64_t s = exhaustive ? 1 : 4;  // shrink factor for sim / gpu
  batch prefill{{512 / s}, {512 / s}};
  batch chunked{{1024 / s, 1024 / s, 1024 / s, 1024 / s}, {128 / s, 128 / s, 128 / s, 128 / s}};
  batch mixed = decode_batch(8, seq_len);
  mixed.seq_lens.push_back(300 / s);
  mixed.query_lens.push_back(300 / s);
  return {prefill, chunked, mixed};
}

// Every attention group of the case's (tp, backend) on the given batches (a whole-model check on
// the model target adds a FlashInfer group's widest prefill step: check_group).
void check_backend(const check_case& base, executor& ex, std::optional<double> tight,
                   const decode_sweep& sweep, const std::vector<batch>& extra, bool whole_model, report& r) {
  const engine e = make_engine(base);
  check_case shell = base;
  shell.model = {};
  const auto model = std::make_shared<const model_geometry>(base.model);
  for (const auto& ag : e.groups) {
    group_result g = check_group({&e, &ag, base, &ex, tight, whole_model, &shell, model}, sweep, extra);
    for (auto& v : g.violations) {
      if (!base.builders.empty()) name_as_dumped(v);
      r.violations.push_back(std::move(v));
    }
    for (auto& t : g.thresholds) r.thresholds.push_back(std::move(t));
    for (auto& n : g.notes) r.notes.push_back(std::move(n));
  }
}

}  // namespace

std::vector<check_case> check_cases(const model_geometry& m, const check_options& o) {
  for (int64_t tp : o.tps) to_rank(m, tp);  // reject every bad tp before any output
  if (o.max_num_seqs < 1 || o.max_num_seqs > max_check_num_seqs)
    throw input_error("check options", "max_num_seqs", std::to_string(o.max_num_seqs),
                      "must be in 1.." + std::to_string(max_check_num_seqs));
  std::vector<check_case> bases;
  for (int64_t tp : o.tps)
    for (backend be : o.backends) {
      check_case base = make_case(m, tp, be, o.pol, o.grp, o.hybrid, o.block_size, o.seed);
      base.layout = o.layout;
      base.triton = o.triton;
      base.engine = o.engine;
      base.engine.max_num_seqs = o.max_num_seqs;
      base.mutants = o.mutants;
      base.flashinfer = o.flashinfer;
      bases.push_back(std::move(base));
    }
  return bases;
}

report run_check(const model_geometry& m, const check_options& o, executor& ex) {
  return run_sweep(check_cases(m, o), o.decode_seq_len, o.tight, ex);
}

report run_sweep(const std::vector<check_case>& bases, int64_t decode_seq_len, std::optional<double> tight,
                 executor& ex) {
  report r;
  const auto extra = extra_batches(decode_seq_len, ex.exhaustive());
  for (const auto& base : bases) {
    const auto sweep = decode_sweep::uniform(base.engine.max_num_seqs, decode_seq_len);
    check_backend(base, ex, tight, sweep, extra, true, r);
  }
  r.ok = r.violations.empty();
  return r;
}

check_case case_of(const violation& v) {
  check_case c = v.shell;
  if (v.model) c.model = *v.model;
  return c;
}

void set_case(violation& v, const check_case& c) {
  v.model = std::make_shared<const model_geometry>(c.model);
  v.shell = c;
  v.shell.model = {};
}

report run_case(const check_case& c, executor& ex, std::optional<double> tight) {
  report r;
  std::vector<batch> decode, extra;
  (c.b.is_decode() ? decode : extra).push_back(c.b);
  check_backend(c, ex, tight, decode_sweep::of(std::move(decode)), extra, false, r);
  r.ok = r.violations.empty();
  return r;
}

}  // namespace headroom
