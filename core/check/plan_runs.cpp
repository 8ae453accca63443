// Plans, runs and per-run verdicts for one attention group.
#include "core/check/plan_runs.hpp"

#include <algorithm>
#include <set>

#include "core/util/error.hpp"

namespace headroom {
namespace {

std::string bytes_text(int64_t b) { return std::to_string(b) + " bytes"; }

bool is_model(const executor& ex) { return std::string(ex.name()) == "model"; }

std::vector<buffer_plan> buffers_of(const any_plan& p) {
  return std::visit([](const auto& x) { return x.buffers; }, p);
}

}  // namespace

plan_runner::plan_runner(const group_context& ctx, int64_t builder_heads)
    : ctx_(ctx), builder_heads_(builder_heads) {}

std::vector<planned_part> plan_runner::plans_for(const batch& b) const {
  return plan_parts(ctx_.base, *ctx_.rg, *ctx_.ag, builder_heads_, b);
}

std::vector<run_failure> plan_runner::run(const rank_layer& l, const batch& b) {
  std::vector<run_failure> out;
  try {
    for (auto& p : plans_for(b)) {
      run_request req{&l, ctx_.base.model.kv_dtype, ctx_.base.block_size, &p.plan, &p.b,
                      ctx_.base.seed};
      observation o = ctx_.ex->run(req);
      judge(p.plan.index(), buffers_of(p.plan), o, l, b, out);
      const bool fi = ctx_.base.be == backend::flashinfer;
      if (fi && l.num_heads != builder_heads_) {
        run_failure f{inv::plan_run_heads, "", 0, 0, "", false};
        f.detail = "planned with " + std::to_string(builder_heads_) + " qo heads, run with q.size(1) = " +
                   std::to_string(l.num_heads);
        if (o.rows_never_computed > 0) {
          f.buffer = "output";  // a separate finding: rows of the output no planned tile covers
          f.detail += "; " + std::to_string(o.rows_never_computed) +
                      " (token, head) rows are never computed (garbage output)";
        }
        out.push_back(std::move(f));
      }
    }
  } catch (const overflow_error& e) {
    out.push_back({inv::index_overflow, "", 0, 0, e.what(), true});
  }
  return out;
}

void plan_runner::judge(std::size_t plan_kind, const std::vector<buffer_plan>& buffers, const observation& o,
                        const rank_layer& l, const batch& b, std::vector<run_failure>& out) {
  std::set<std::string> reported;
  for (const auto& t : o.touched) {
    const buffer_plan* bp = find_buffer(buffers, t.name);
    if (!bp) continue;
    peak& pk = peaks_[{plan_kind, t.name, bp->capacity_bytes}];
    if (t.bytes() > pk.need) pk.need = t.bytes(), pk.where = b;
    if (t.elems - 1 > max_kernel_index)
      out.push_back({inv::index_overflow, t.name, bp->capacity_bytes, t.bytes(),
                     t.name + ": element index " + std::to_string(t.elems - 1) +
                         " does not fit the kernel's 32-bit offsets", true});
    if (t.elems <= bp->capacity_elems()) continue;
    const bool model = is_model(*ctx_.ex);
    run_failure f{model ? inv::buffer_capacity : inv::out_of_bounds, t.name, bp->capacity_bytes,
                  t.bytes(), "", true};
    f.detail = t.name + " holds " + bytes_text(bp->capacity_bytes) + " (planned for " +
               std::to_string(builder_heads_) + " heads) but a layer with " +
               std::to_string(l.num_heads) + " heads " + (model ? "needs " : "touched ") +
               bytes_text(t.bytes()) + " at batch size " + std::to_string(b.num_seqs());
    for (const auto& a : o.oob)
      if (a.buffer == t.name) {
        f.detail += "; first: " + std::string(a.write ? "write" : "read") + " of index " +
                    std::to_string(a.index) + " (extent " + std::to_string(a.extent) +
                    ") by block (" + std::to_string(a.block[0]) + "," + std::to_string(a.block[1]) +
                    "," + std::to_string(a.block[2]) + ") thread (" + std::to_string(a.thread[0]) +
                    "," + std::to_string(a.thread[1]) + "," + std::to_string(a.thread[2]) + ")";
        break;
      }
    reported.insert(t.name);
    out.push_back(std::move(f));
  }
  for (const auto& a : o.oob)
    if (reported.insert(a.buffer).second)
      out.push_back({inv::out_of_bounds, a.buffer, a.extent, (a.index + 1), std::string(a.write ? "write" : "read") +
                     " of " + a.buffer + "[" + std::to_string(a.index) + "] past extent " +
                     std::to_string(a.extent), true});
  if (o.output_mismatch)
    out.push_back({inv::output_mismatch, "output", 0, 0, o.mismatch_detail, false});
  if (o.guard_corrupted)
    out.push_back({inv::guard_corrupted, "", 0, 0, o.guard_detail, true});
  if (o.faulted)
    out.push_back({inv::out_of_bounds, "", 0, 0, "the launch faulted: " + o.fault_detail, true});
  if (o.uninitialized_reads > 0)
    out.push_back({"uninitialized_read", "", 0, 0,
                   std::to_string(o.uninitialized_reads) + " reads of never-written memory", false});
  if (o.races > 0)
    out.push_back({"shared_race", "", 0, 0,
                   std::to_string(o.races) + " shared-memory accesses race across a missing barrier",
                   false});
}

std::vector<std::size_t> plan_runner::sweep_points(const std::vector<batch>& sweep,
                                                   const std::vector<const rank_layer*>& reps) {
  std::vector<std::size_t> all(sweep.size());
  for (std::size_t i = 0; i < sweep.size(); ++i) all[i] = i;
  if (ctx_.ex->exhaustive() || sweep.empty()) return all;
  // Ask the formulas which batches touch plan buffers and where the first failure is.
  model_executor model;
  group_context mctx = ctx_;
  mctx.ex = &model;
  plan_runner probe(mctx, builder_heads_);
  std::vector<std::size_t> touching;
  std::optional<std::size_t> first_fail;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    bool touches = false, fails = false;
    for (const rank_layer* l : reps) {
      for (auto& p : probe.plans_for(sweep[i])) {
        run_request req{l, ctx_.base.model.kv_dtype, ctx_.base.block_size, &p.plan, &p.b, 0};
        touches = touches || !model.run(req).touched.empty();
      }
      for (auto& f : probe.run(*l, sweep[i])) fails = fails || f.is_capacity_failure;
    }
    if (touches) touching.push_back(i);
    if (fails && !first_fail) first_fail = i;
  }
  std::set<std::size_t> pick;
  if (touching.size() <= target_budget) {
    pick.insert(touching.begin(), touching.end());
  } else {
    for (std::size_t k = 0; k < 6; ++k) pick.insert(touching[k]);
    for (std::size_t k = 0; k < 4; ++k) pick.insert(touching[touching.size() - 1 - k]);
    for (std::size_t k = 0; k < 8; ++k) pick.insert(touching[k * touching.size() / 8]);
  }
  if (first_fail) {
    pick.insert(*first_fail);
    if (*first_fail > 0) pick.insert(*first_fail - 1);
  }
  if (!touching.empty() && touching.back() + 1 < sweep.size()) pick.insert(touching.back() + 1);
  if (pick.empty()) pick.insert(0);
  note_ = std::string(ctx_.ex->name()) + " ran " + std::to_string(pick.size()) + " of " +
          std::to_string(sweep.size()) + " decode batches for " + to_string(ctx_.base.be) +
          " tp " + std::to_string(ctx_.base.tp) + " group " + std::to_string(ctx_.ag->index) +
          " (every batch that uses the plan's buffers up to " + std::to_string(target_budget) +
          ", the formulas' first failure and its predecessor, and one beyond)";
  return {pick.begin(), pick.end()};
}

std::vector<tight_failure> plan_runner::tight_failures() const {
  std::vector<tight_failure> out;
  if (!ctx_.tight) return out;
  for (const auto& [key, pk] : peaks_) {
    const auto& [kind, name, capacity] = key;
    (void)kind;
    if (pk.need > 0 && static_cast<double>(capacity) > *ctx_.tight * static_cast<double>(pk.need))
      out.push_back({name, capacity, pk.need,
                     name + " holds " + bytes_text(capacity) + ", more than " +
                         std::to_string(*ctx_.tight) + " x the largest need (" +
                         bytes_text(pk.need) + ")",
                     pk.where});
  }
  return out;
}

}  // namespace headroom
