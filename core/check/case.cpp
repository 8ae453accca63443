// make_case, and case JSON: lossless in both directions (a counterexample file is a case).
#include "core/check/case.hpp"

#include <charconv>
#include <string>

#include <nlohmann/json.hpp>

#include "core/check/builder_dump.hpp"
#include "core/check/settings_json.hpp"
#include "core/model/loader.hpp"
#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom {
namespace jr = json_read;
using nlohmann::json;

namespace {

// The Triton switches. Older case files also carried max_num_seqs and max_capture_size here (now
// engine settings) and kv_from_group_spec (false is now the triton-model-kv-heads mutant).
triton_options triton_from(const json& j, const std::string& file, const std::string& path, check_case& c) {
  triton_options t;
  const std::string p = path + "triton.";
  t.cap_max_num_seqs = jr::get_bool_or(j, "cap_max_num_seqs", t.cap_max_num_seqs, file, p);
  t.snap_to_capture = jr::get_bool_or(j, "snap_to_capture", t.snap_to_capture, file, p);
  c.engine.max_num_seqs =
      jr::get_int_or(j, "max_num_seqs", c.engine.max_num_seqs, file, p, 1, max_settings_seqs);
  c.engine.max_capture_size =
      jr::get_int_or(j, "max_capture_size", c.engine.max_capture_size, file, p, 0, max_settings_tokens);
  if (!jr::get_bool_or(j, "kv_from_group_spec", true, file, p))
    c.mutants = make_mutant_set({"triton-model-kv-heads"}, file, p + "kv_from_group_spec");
  return t;
}

std::vector<int64_t> int_list(const json& obj, const std::string& key, const std::string& file,
                              const std::string& path) {
  const json& v = jr::field(obj, key, file, path);
  if (!v.is_array()) throw input_error(file, path + key, jr::shown(v), "expected a list");
  if (static_cast<int64_t>(v.size()) > max_batch_seqs)
    throw input_error(file, path + key, std::to_string(v.size()) + " entries", "too many requests");
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(jr::as_int(v[i], file, path + key + "[" + std::to_string(i) + "]", 1, max_seq_len));
  return out;
}

}  // namespace

json to_json(const triton_options& t) {
  return {{"cap_max_num_seqs", t.cap_max_num_seqs}, {"snap_to_capture", t.snap_to_capture}};
}

json to_json(const flashinfer_options& f) {
  json occ = json::object(), by_head = json::object();
  for (auto [g, b] : f.device.blocks_per_sm) occ[std::to_string(g)] = b;
  for (auto [gd, b] : f.device.blocks_by_head)
    by_head[std::to_string(gd.first) + "x" + std::to_string(gd.second)] = b;
  return {{"cuda_graph", f.cuda_graph},
          {"page_size", f.page_size},
          {"window_left", f.window_left},
          {"disable_split_kv", f.disable_split_kv},
          {"tensor_core_decode", f.tensor_core_decode},
          {"prefill_sm90", f.prefill_sm90},
          {"prefill_auto", f.prefill_auto},
          {"trtllm_attention_off", f.trtllm_attention_off},
          {"fixed_split_size", f.fixed_split_size},
          {"uniform_q_len", f.uniform_q_len},
          {"num_colocated_ctas", f.num_colocated_ctas},
          {"kv_dtype_bytes", f.kv_dtype_bytes},
          {"total_num_rows", f.total_num_rows},
          {"device",
           {{"num_sms", f.device.num_sms},
            {"blocks_per_sm", occ},
            {"blocks_by_head", by_head},
            {"default_blocks_per_sm", f.device.default_blocks_per_sm},
            {"compute_major", f.device.compute_major},
            {"max_smem_per_block_optin", f.device.max_smem_per_block_optin}}}};
}

namespace {

// A blocks_per_sm key as a group size, only when written as to_json writes it ("1x" and "01" are
// not 1, which std::stoll accepted); 0 otherwise.
int64_t group_size_key(const std::string& k) {
  int64_t g = 0;
  std::from_chars(k.data(), k.data() + k.size(), g);  // g stays 0 on failure
  return std::to_string(g) == k ? g : 0;
}

// A blocks_by_head key "GxD" (group size x head size, as to_json writes it); {0, 0} otherwise.
std::pair<int64_t, int64_t> group_head_key(const std::string& k) {
  const auto x = k.find('x');
  if (x == std::string::npos) return {0, 0};
  const int64_t g = group_size_key(k.substr(0, x)), d = group_size_key(k.substr(x + 1));
  return g > 0 && d > 0 ? std::pair<int64_t, int64_t>{g, d} : std::pair<int64_t, int64_t>{0, 0};
}

}  // namespace

flashinfer_options flashinfer_from_json(const json& j, const std::string& file, const std::string& path) {
  flashinfer_options f;
  const std::string p = path + "flashinfer.";
  f.cuda_graph = jr::get_bool_or(j, "cuda_graph", f.cuda_graph, file, p);
  f.page_size = jr::get_int_or(j, "page_size", f.page_size, file, p, 1, 1 << 16);
  f.window_left = jr::get_int_or(j, "window_left", f.window_left, file, p, -1, 1LL << 31);
  f.disable_split_kv = jr::get_bool_or(j, "disable_split_kv", f.disable_split_kv, file, p);
  f.tensor_core_decode = jr::get_bool_or(j, "tensor_core_decode", f.tensor_core_decode, file, p);
  f.prefill_sm90 = jr::get_bool_or(j, "prefill_sm90", f.prefill_sm90, file, p);
  f.prefill_auto = jr::get_bool_or(j, "prefill_auto", f.prefill_auto, file, p);
  f.trtllm_attention_off = jr::get_bool_or(j, "trtllm_attention_off", f.trtllm_attention_off, file, p);
  f.fixed_split_size = jr::get_int_or(j, "fixed_split_size", f.fixed_split_size, file, p, -1, 1LL << 31);
  f.uniform_q_len = jr::get_int_or(j, "uniform_q_len", f.uniform_q_len, file, p, 0, 1LL << 31);
  f.num_colocated_ctas = jr::get_int_or(j, "num_colocated_ctas", f.num_colocated_ctas, file, p, 0, 1 << 20);
  f.kv_dtype_bytes = jr::get_int_or(j, "kv_dtype_bytes", f.kv_dtype_bytes, file, p, 1, 8);
  f.total_num_rows = jr::get_int_or(j, "total_num_rows", f.total_num_rows, file, p, 0, 1LL << 31);
  if (j.contains("device")) {
    const json& d = jr::get_object(j, "device", file, p);
    const std::string dp = p + "device.";
    f.device.num_sms = jr::get_int(d, "num_sms", file, dp, 1, 1 << 16);
    f.device.default_blocks_per_sm = jr::get_int(d, "default_blocks_per_sm", file, dp, 1, 1024);
    f.device.blocks_per_sm.clear();
    const json& occ = jr::get_object(d, "blocks_per_sm", file, dp);
    for (auto& [k, v] : occ.items()) {
      const int64_t g = group_size_key(k);
      if (g < 1)
        throw input_error(file, dp + "blocks_per_sm", "\"" + k + "\"", "keys are group sizes: integers >= 1");
      f.device.blocks_per_sm[g] = jr::as_int(v, file, dp + "blocks_per_sm." + k, 1, 1024);
    }
    f.device.blocks_by_head.clear();
    if (d.contains("blocks_by_head"))
      for (auto& [k, v] : jr::get_object(d, "blocks_by_head", file, dp).items()) {
        const auto gd = group_head_key(k);
        if (gd.first < 1)
          throw input_error(file, dp + "blocks_by_head", "\"" + k + "\"",
                            "keys are GxD: group size x head size");
        f.device.blocks_by_head[gd] = jr::as_int(v, file, dp + "blocks_by_head." + k, 1, 1024);
      }
    f.device.compute_major = jr::get_int_or(d, "compute_major", f.device.compute_major, file, dp, 1, 100);
    f.device.max_smem_per_block_optin = jr::get_int_or(
        d, "max_smem_per_block_optin", f.device.max_smem_per_block_optin, file, dp, 1, 1 << 24);
  }
  return f;
}

check_case make_case(const model_geometry& m, int64_t tp, backend be, policy pol, grouping grp, bool hybrid,
                     int64_t block_size, uint64_t seed) {
  check_case c;
  c.model = m;
  c.tp = tp;
  c.be = be;
  c.pol = pol;
  c.grp = grp;
  c.hybrid = hybrid;
  c.block_size = block_size;
  c.seed = seed;
  return c;
}

json to_json(const check_case& c) {
  json j = {{"headroom_case", 1},
            {"model", to_json(c.model)},
            {"tp", c.tp},
            {"backend", to_string(c.be)},
            {"policy", to_string(c.pol)},
            {"grouping", to_string(c.grp)},
            {"hybrid", c.hybrid},
            {"block_size", c.block_size},
            {"kv_layout", to_string(c.layout)},
            {"batch", {{"seq_lens", c.b.seq_lens}, {"query_lens", c.b.query_lens}}},
            {"seed", c.seed},
            {"engine", to_json(c.engine)},
            {"step", to_json(c.step)},
            {"mutants", c.mutants},
            {"triton", to_json(c.triton)},
            {"flashinfer", to_json(c.flashinfer)},
            {"builder_names", c.builder_names}};
  if (!c.builders.empty()) {
    j["builders"] = json::array();
    for (const auto& d : c.builders) j["builders"].push_back(to_json(d));
  }
  return j;
}

check_case case_from_json(const json& j, const std::string& file, const std::vector<model_geometry>* models,
                          const std::string& path) {
  if (!j.is_object()) throw input_error(file, path + "<case>", jr::shown(j), "a case is a JSON object");
  check_case c;
  if (models && j.contains("model_ref"))
    c.model = models->at(static_cast<std::size_t>(
        jr::get_int(j, "model_ref", file, path, 0, static_cast<int64_t>(models->size()) - 1)));
  else
    c.model = parse_model(jr::field(j, "model", file, path), file);
  c.tp = jr::get_int(j, "tp", file, path, 1, max_tp);
  c.be = parse_backend(jr::get_string(j, "backend", file, path), file, path + "backend");
  c.pol = parse_policy(jr::get_string(j, "policy", file, path), file, path + "policy");
  c.grp = parse_grouping(jr::get_string(j, "grouping", file, path), file, path + "grouping");
  c.hybrid = jr::get_bool_or(j, "hybrid", true, file, path);
  c.block_size = jr::get_int_or(j, "block_size", 16, file, path, 1, 1 << 16);
  c.layout = j.contains("kv_layout")
                 ? parse_kv_layout(jr::get_string(j, "kv_layout", file, path), file, path + "kv_layout")
                 : kv_layout::separate;
  const json& b = jr::field(j, "batch", file, path);
  c.b.seq_lens = int_list(b, "seq_lens", file, path + "batch.");
  c.b.query_lens = int_list(b, "query_lens", file, path + "batch.");
  validate(c.b, file, path + "batch");
  const json& seed = j.contains("seed") ? j.at("seed") : json(0);
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
    throw input_error(file, path + "seed", jr::shown(seed), "expected a non-negative integer");
  c.seed = seed.get<uint64_t>();
  if (j.contains("engine")) c.engine = settings_from_json(j.at("engine"), file, path + "engine.");
  if (j.contains("step")) c.step = step_from_json(j.at("step"), file, path + "step.");
  if (j.contains("triton")) c.triton = triton_from(jr::get_object(j, "triton", file, path), file, path, c);
  if (j.contains("mutants")) {
    mutant_set named = mutants_from_json(j.at("mutants"), file, path + "mutants");
    named.insert(named.end(), c.mutants.begin(), c.mutants.end());
    c.mutants = make_mutant_set(named, file, path + "mutants");
  }
  if (j.contains("flashinfer"))
    c.flashinfer = flashinfer_from_json(jr::get_object(j, "flashinfer", file, path), file, path);
  validate_step(c, file, path);
  if (j.contains("builder_names")) {
    const json& names = j.at("builder_names");
    if (!names.is_array() || names.size() > static_cast<std::size_t>(max_layers))
      throw input_error(file, path + "builder_names", jr::shown(names), "expected a list of layer names");
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!names[i].is_string())
        throw input_error(file, path + "builder_names[" + std::to_string(i) + "]", jr::shown(names[i]),
                          "expected a layer name");
      c.builder_names.push_back(names[i].get<std::string>());
    }
  }
  if (j.contains("builders")) {
    const json& v = j.at("builders");
    if (!v.is_array() || v.size() > static_cast<std::size_t>(max_layers))
      throw input_error(file, path + "builders", jr::shown(v), "expected a list of builder dumps");
    for (std::size_t i = 0; i < v.size(); ++i)
      c.builders.push_back(builder_dump_from_json(v[i], file, path + "builders[" + std::to_string(i) + "]."));
  }
  return c;
}

void validate_step(const check_case& c, const std::string& file, const std::string& path) {
  validate(c.step, c.engine, file, path + "step.");
  if (c.step.kind != step_kind::draft) return;
  if (c.b.num_seqs() > c.engine.max_num_seqs)
    throw input_error(file, path + "batch.seq_lens", std::to_string(c.b.num_seqs()) + " requests",
                      "a draft pass's verify batch holds at most engine.max_num_seqs " +
                          std::to_string(c.engine.max_num_seqs));
  for (std::size_t i = 0; i < c.b.seq_lens.size(); ++i)
    if (c.b.seq_lens[i] > c.engine.max_model_len)
      throw input_error(file, path + "batch.seq_lens[" + std::to_string(i) + "]",
                        std::to_string(c.b.seq_lens[i]),
                        "a verify pass's request is at most engine.max_model_len " +
                            std::to_string(c.engine.max_model_len) + " long");
}

check_case load_case(const std::string& path) {
  return read_json_input(path, [&](const json& j) { return case_from_json(j, path); });
}

}  // namespace headroom
