// Plans, runs and per-run verdicts for one attention group.
#include "core/check/plan_runs.hpp"

#include <optional>
#include <set>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

std::string bytes_text(int64_t b) { return std::to_string(b) + " bytes"; }

std::string first_access_text(const access_record& a) {
  auto triple = [](const int64_t(&v)[3]) {
    std::string s = "(";
    s += std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
    return s;
  };
  return std::string(a.write ? "write" : "read") + " of index " + std::to_string(a.index) + " (extent " +
         std::to_string(a.extent) + ") by block " + triple(a.block) + " thread " + triple(a.thread);
}

// The class of a run's finding, from what differs between the plan and the layer: heads (C1), the
// head size the builder padded for (C2, or C9 when it came from hidden_size / heads), a 32-bit
// offset (C6).
bug_class cause_of(const finding& f, const check_case& c, const any_plan& plan, const rank_layer& l,
                   int64_t builder_heads) {
  if (f.inv == invariant::index_overflow) return bug_class::c6;
  if (!is_attention_plan(plan)) return bug_class::none;  // the class check running it names it
  if (f.inv == invariant::plan_run_heads || l.num_heads != builder_heads) return bug_class::c1;
  const auto* tp = std::get_if<triton_plan>(&plan);
  const auto* fd = std::get_if<fi_decode_plan>(&plan);
  const auto* fp = std::get_if<fi_prefill_plan>(&plan);
  const bool other_size = (tp && tp->head_size_padded != next_pow2(l.head_size)) ||
                          (fd && fd->head_size != l.head_size) || (fp && fp->head_size != l.head_size);
  if (other_size) return has_mutant(c.mutants, "head-dim-from-hidden") ? bug_class::c9 : bug_class::c2;
  return bug_class::none;
}

// PrefillSM90Plan's int workspace (fi_int_workspace_parts): AlignedAllocator raises naming the first
// part past the int workspace; the page-locked copy is not checked. Under CUDA graphs with
// total_num_rows short of the batch's rows the plan writes more work entries than its parts hold
// (works_past_parts): a store past the first per-work part, into the next. check's own batches do
// not reach that (a decode request is one tile, within the bound; prefill plans eagerly).
std::vector<finding> sm90_workspace_overflows(const fi_prefill_sm90_plan& p, const batch& b) {
  std::vector<finding> out;
  const int64_t need = fi_int_workspace_bytes(p);
  const std::string at = " at batch size " + std::to_string(b.num_seqs()) + " (" +
                         std::to_string(p.total_works) + " works, " + std::to_string(p.allocated_works) +
                         " allocated";
  for (const char* name : {"int_workspace", "page_locked_int_workspace"}) {
    const buffer_plan* ws = find_buffer(p.buffers, name);
    if (!ws || need <= ws->capacity_bytes) continue;
    const bool device = std::string(name) == "int_workspace";
    out.push_back(
        {invariant::buffer_capacity, name, ws->capacity_bytes, need,
         std::string(name) + " holds " + bytes_text(ws->capacity_bytes) +
             " but PrefillSM90Plan's parts need " + bytes_text(need) + at + "; " +
             (device ? "AlignedAllocator raises: buffer overflow when allocating memory for " +
                           fi_int_workspace_overflow(p, ws->capacity_bytes)
                     : std::string("FlashInfer does not check it: the plan writes past it on the host")) +
             ")"});
  }
  if (p.works_past_parts()) {
    const fi_workspace_part first = fi_int_workspace_parts(p).front();
    out.push_back({invariant::buffer_capacity, first.name, first.bytes, checked_mul(p.total_works, 4),
                   first.name + " holds " + std::to_string(p.allocated_works) +
                       " work entries (total_num_rows " + std::to_string(p.total_num_rows) +
                       ") but the plan writes " + std::to_string(p.total_works) + at +
                       "): stores past the part, into the next"});
  }
  return out;
}

// FlashInfer carves a step's parts out of its float and int workspaces and raises when they do not
// fit (fi_int_workspace_bytes: flashinfer.hpp); the page-locked int buffer it copies the used int
// bytes from is not checked by FlashInfer, so a smaller one is written past on the host. Only
// dumped plans carry the workspaces ("float_workspace", "int_workspace",
// "page_locked_int_workspace"); the mirror's own plans leave them out, except PrefillSM90Plan's
// (the wrappers' 8 MiB int workspace, plans.cpp). Decode and prefill plans
// alike: both planners are FlashInfer's field by field (docs/flashinfer-planner.md).
std::vector<finding> workspace_overflows(const any_plan& plan, const batch& b) {
  std::vector<finding> out;
  if (const auto* s = std::get_if<fi_prefill_sm90_plan>(&plan)) return sm90_workspace_overflows(*s, b);
  const auto* fd = std::get_if<fi_decode_plan>(&plan);
  const auto* fp = std::get_if<fi_prefill_plan>(&plan);
  if (!fd && !fp) return out;
  const auto& buffers = plan_buffers(plan);
  const int64_t int_need = fd ? fi_int_workspace_bytes(*fd) : fi_int_workspace_bytes(*fp);
  const struct {
    const char* name;
    int64_t need;
    const char* effect;
  } spaces[] = {
      {"float_workspace", fi_float_workspace_bytes(buffers), "the planner raises before any kernel runs"},
      {"int_workspace", int_need, "the planner raises before any kernel runs"},
      {"page_locked_int_workspace", int_need,
       "FlashInfer does not check it: the plan writes past it on the host"},
  };
  for (const auto& w : spaces) {
    const buffer_plan* ws = find_buffer(buffers, w.name);
    if (!ws || w.need <= ws->capacity_bytes) continue;
    out.push_back({invariant::buffer_capacity, w.name, ws->capacity_bytes, w.need,
                   std::string(w.name) + " holds " + bytes_text(ws->capacity_bytes) +
                       " but the plan's parts need " + bytes_text(w.need) + " at batch size " +
                       std::to_string(b.num_seqs()) + " (" + w.effect + ")"});
  }
  return out;
}

}  // namespace

plan_runner::plan_runner(const group_context& ctx, int64_t builder_heads)
    : ctx_(ctx), builder_heads_(builder_heads) {}

std::vector<planned_part> plan_runner::plans_for(const batch& b) const {
  return plan_parts(ctx_.base, ctx_.eng->rg, *ctx_.ag, builder_heads_, b);
}

std::vector<finding> plan_runner::run(const rank_layer& l, const batch& b) {
  return run_parts(l, plans_for(b), nullptr);
}

std::vector<finding> plan_runner::run_parts(const rank_layer& l, const std::vector<planned_part>& parts,
                                            const engine_step* step) {
  std::vector<finding> out;
  const check_case& c = ctx_.base;
  try {
    const table_shape table = block_table_of(c, *ctx_.ag);
    for (const auto& p : parts) {
      run_request req{&l,   c.model.kv_dtype, c.block_size, &p.plan, &p.b, c.seed,
                      step, table.rows,       table.width,  c.layout};
      observation o = ctx_.ex->run(req);
      const std::size_t first = out.size();
      judge(p.plan, o, l, p.b, out);
      for (auto& ws : workspace_overflows(p.plan, p.b)) out.push_back(std::move(ws));
      for (std::size_t i = first; i < out.size(); ++i)
        if (out[i].cls == bug_class::none) out[i].cls = cause_of(out[i], c, p.plan, l, builder_heads_);
      const bool fi_attention = std::holds_alternative<fi_decode_plan>(p.plan) ||
                                std::holds_alternative<fi_prefill_plan>(p.plan) ||
                                std::holds_alternative<fi_prefill_sm90_plan>(p.plan);
      if (fi_attention && l.num_heads != builder_heads_) {
        finding f{invariant::plan_run_heads, "", 0, 0,
                  "planned with " + std::to_string(builder_heads_) +
                      " qo heads, run with q.size(1) = " + std::to_string(l.num_heads)};
        if (o.rows_never_computed > 0) {
          f.buffer = "output";  // a separate finding: rows of the output no planned tile covers
          f.detail += "; " + std::to_string(o.rows_never_computed) +
                      " (token, head) rows are never computed (garbage output)";
        }
        f.cls = bug_class::c1;
        out.push_back(std::move(f));
      }
    }
  } catch (const overflow_error& e) {
    out.push_back({invariant::index_overflow, "", 0, 0, e.what(), bug_class::c6});
  }
  return out;
}

void plan_runner::judge(const any_plan& plan, const observation& o, const rank_layer& l, const batch& b,
                        std::vector<finding>& out) {
  const std::size_t plan_kind = plan.index();
  const std::vector<buffer_plan>& buffers = plan_buffers(plan);
  const bool formulas = ctx_.ex->kind() == target_kind::model;
  // Who needs the bytes: a layer's heads for an attention plan, the batch for a step's metadata.
  const std::string planned =
      is_attention_plan(plan) ? " (planned for " + std::to_string(builder_heads_) + " heads)" : "";
  const std::string runner = is_attention_plan(plan)
                                 ? " but a layer with " + std::to_string(l.num_heads) + " heads "
                                 : " but the step ";
  std::set<std::string> reported;
  // Blocks that read never-written work entries run on garbage indices (C10): their accesses past
  // the inputs and the output, and a fault, are that read's consequences, reported with it.
  const bool garbage_indices = o.worklist_uninitialized_reads > 0;
  int64_t consequences = 0;
  if (garbage_indices)
    for (const auto& a : o.oob)
      if (!find_buffer(buffers, a.buffer) && reported.insert(a.buffer).second) ++consequences;
  for (const auto& t : o.touched) {
    const buffer_plan* bp = find_buffer(buffers, t.name);
    if (!bp) continue;
    peak& pk = peaks_[{plan_kind, t.name, bp->capacity_bytes}];
    if (t.bytes() > pk.need) pk.need = t.bytes(), pk.where = b;
    if (t.elems - 1 > max_kernel_index)
      out.push_back({invariant::index_overflow, t.name, bp->capacity_bytes, t.bytes(),
                     t.name + ": element index " + std::to_string(t.elems - 1) +
                         " does not fit the kernel's 32-bit offsets"});
    if (t.elems <= bp->capacity_elems()) continue;
    finding f{formulas ? invariant::buffer_capacity : invariant::out_of_bounds, t.name, bp->capacity_bytes,
              t.bytes(),
              t.name + " holds " + bytes_text(bp->capacity_bytes) + planned + runner +
                  (formulas ? "needs " : "touched ") + bytes_text(t.bytes()) + " at batch size " +
                  std::to_string(b.num_seqs())};
    for (const auto& a : o.oob)
      if (a.buffer == t.name) {
        f.detail += "; first: " + first_access_text(a);
        break;
      }
    reported.insert(t.name);
    out.push_back(std::move(f));
  }
  for (const auto& a : o.oob)
    if (reported.insert(a.buffer).second)
      out.push_back({invariant::out_of_bounds, a.buffer, a.extent, a.index + 1,
                     std::string(a.write ? "write" : "read") + " of " + a.buffer + "[" +
                         std::to_string(a.index) + "] past extent " + std::to_string(a.extent)});
  if (o.index_overflows > 0)
    out.push_back({invariant::index_overflow, "", 0, 0,
                   "a token offset into q / the output wraps 32 bits (" + std::to_string(o.index_overflows) +
                       " evaluations; layer with " + std::to_string(l.num_heads) + " heads of size " +
                       std::to_string(l.head_size) + ")"});
  if (o.output_mismatch) out.push_back({invariant::output_mismatch, "output", 0, 0, o.mismatch_detail});
  if (o.guard_corrupted) out.push_back({invariant::guard_corrupted, "", 0, 0, o.guard_detail});
  if (o.faulted && !garbage_indices)
    out.push_back({invariant::out_of_bounds, "", 0, 0, "the launch faulted: " + o.fault_detail});
  if (garbage_indices) {
    finding f{invariant::uninitialized_read, "request_indices", 0, 0,
              std::to_string(o.worklist_uninitialized_reads) +
                  " reads of work entries the planner never wrote (grid past its written entries, no "
                  "block_valid_mask)"};
    if (consequences > 0)
      f.detail += "; the blocks that read them then accessed " + std::to_string(consequences) +
                  " buffers out of bounds";
    if (o.faulted) f.detail += "; the launch faulted: " + o.fault_detail;
    f.cls = bug_class::c10;
    out.push_back(std::move(f));
  } else if (o.uninitialized_reads > 0) {
    out.push_back({invariant::uninitialized_read, "", 0, 0,
                   std::to_string(o.uninitialized_reads) + " reads of never-written memory"});
  }
  if (o.races > 0)
    out.push_back({invariant::shared_race, "", 0, 0,
                   std::to_string(o.races) + " shared-memory accesses race across a missing barrier"});
}

std::vector<std::pair<finding, batch>> plan_runner::tight_findings() const {
  std::vector<std::pair<finding, batch>> out;
  if (!ctx_.tight) return out;
  for (const auto& [key, pk] : peaks_) {
    const auto& [kind, name, capacity] = key;
    (void)kind;
    if (pk.need > 0 && static_cast<double>(capacity) > *ctx_.tight * static_cast<double>(pk.need))
      out.push_back({{invariant::tight_bound, name, capacity, pk.need,
                      name + " holds " + bytes_text(capacity) + ", more than " + std::to_string(*ctx_.tight) +
                          " x the largest need (" + bytes_text(pk.need) + ")"},
                     pk.where});
  }
  return out;
}

}  // namespace headroom
