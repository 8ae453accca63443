// See settings_json.hpp.
#include "core/check/settings_json.hpp"

#include <nlohmann/json.hpp>

#include "core/util/json_read.hpp"

namespace headroom {
namespace jr = json_read;
using nlohmann::json;

json to_json(const engine_settings& s) {
  return {{"max_num_seqs", s.max_num_seqs},
          {"max_model_len", s.max_model_len},
          {"max_num_batched_tokens", s.max_num_batched_tokens},
          {"num_speculative_tokens", s.num_speculative_tokens},
          {"cudagraph_mode", to_string(s.cg_mode)},
          {"max_capture_size", s.max_capture_size},
          {"capture_sizes", s.capture_sizes},
          {"flavour", to_string(s.flavour)},
          {"req_pool_size", s.req_pool_size},
          {"attn_tp_size", s.attn_tp_size},
          {"gathered_buffer", s.gathered_buffer},
          {"two_batch_overlap", s.two_batch_overlap},
          {"attn_cp_size", s.attn_cp_size},
          {"cp_zigzag", s.cp_zigzag},
          {"head_tile", s.head_tile},
          {"mamba_block_size", s.mamba_block_size},
          {"extra_group_block_size", s.extra_group_block_size}};
}

engine_settings settings_from_json(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) throw input_error(file, path, jr::shown(j), "expected an object");
  engine_settings s;
  const int64_t big = int64_t{1} << 40;  // validate() gives the real ranges below
  s.max_num_seqs = jr::get_int_or(j, "max_num_seqs", s.max_num_seqs, file, path, 1, big);
  s.max_model_len = jr::get_int_or(j, "max_model_len", s.max_model_len, file, path, 1, big);
  s.max_num_batched_tokens =
      jr::get_int_or(j, "max_num_batched_tokens", s.max_num_batched_tokens, file, path, 1, big);
  s.num_speculative_tokens =
      jr::get_int_or(j, "num_speculative_tokens", s.num_speculative_tokens, file, path, 0, big);
  if (j.contains("cudagraph_mode"))
    s.cg_mode =
        parse_cudagraph_mode(jr::get_string(j, "cudagraph_mode", file, path), file, path + "cudagraph_mode");
  s.max_capture_size = jr::get_int_or(j, "max_capture_size", s.max_capture_size, file, path, 0, big);
  if (j.contains("capture_sizes")) {
    const json& v = j.at("capture_sizes");
    if (!v.is_array() || v.size() > 4096)
      throw input_error(file, path + "capture_sizes", jr::shown(v), "expected a list of at most 4096 sizes");
    for (std::size_t i = 0; i < v.size(); ++i)
      s.capture_sizes.push_back(
          jr::as_int(v[i], file, path + "capture_sizes[" + std::to_string(i) + "]", 1, big));
  }
  if (j.contains("flavour"))
    s.flavour = parse_engine_flavour(jr::get_string(j, "flavour", file, path), file, path + "flavour");
  s.req_pool_size = jr::get_int_or(j, "req_pool_size", s.req_pool_size, file, path, 0, big);
  s.attn_tp_size = jr::get_int_or(j, "attn_tp_size", s.attn_tp_size, file, path, 1, big);
  s.gathered_buffer = jr::get_bool_or(j, "gathered_buffer", s.gathered_buffer, file, path);
  s.two_batch_overlap = jr::get_bool_or(j, "two_batch_overlap", s.two_batch_overlap, file, path);
  s.attn_cp_size = jr::get_int_or(j, "attn_cp_size", s.attn_cp_size, file, path, 1, big);
  s.cp_zigzag = jr::get_bool_or(j, "cp_zigzag", s.cp_zigzag, file, path);
  s.head_tile = jr::get_int_or(j, "head_tile", s.head_tile, file, path, 0, big);
  s.mamba_block_size = jr::get_int_or(j, "mamba_block_size", s.mamba_block_size, file, path, 0, big);
  s.extra_group_block_size =
      jr::get_int_or(j, "extra_group_block_size", s.extra_group_block_size, file, path, 0, big);
  validate(s, file, path);
  return s;
}

json to_json(const step_spec& s) {
  json j = {{"kind", to_string(s.kind)}};
  if (s.kind == step_kind::dummy) j["tokens"] = s.tokens, j["uniform"] = s.uniform;
  if (s.kind == step_kind::draft) j["pass"] = s.pass;
  return j;
}

step_spec step_from_json(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) throw input_error(file, path, jr::shown(j), "expected an object");
  step_spec s;
  s.kind = parse_step_kind(jr::get_string(j, "kind", file, path), file, path + "kind");
  if (s.kind == step_kind::dummy) {
    s.tokens = jr::get_int(j, "tokens", file, path, 1, max_settings_tokens);
    s.uniform = jr::get_bool_or(j, "uniform", false, file, path);
  }
  if (s.kind == step_kind::draft) s.pass = jr::get_int(j, "pass", file, path, 0, max_settings_spec_tokens);
  return s;
}

mutant_set mutants_from_json(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_array() || j.size() > 64)
    throw input_error(file, path, jr::shown(j), "expected a list of mutant names");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw input_error(file, path + "[" + std::to_string(i) + "]", jr::shown(j[i]),
                        "expected a mutant name");
    names.push_back(j[i].get<std::string>());
  }
  return make_mutant_set(names, file, path);
}

}  // namespace headroom
