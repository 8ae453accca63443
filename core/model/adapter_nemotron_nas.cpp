// Nemotron-NAS / DeciLM adapter (vLLM models/nemotron_nas.py). `block_configs[i].attention`
// describes layer i: `no_op: true` or `replace_with_linear: true` means no attention layer;
// otherwise the layer has num_attention_heads query heads and
// num_attention_heads / n_heads_in_group kv heads. The model-wide kv count is that of the first
// block with attention (vLLM ModelConfig does the same for nemotron-nas).
#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom::hf {

namespace {

struct block {
  bool attention = false;
  int64_t kv = 0;
  std::string kv_field;
};

block read_block(const source& s, const json& entry, std::size_t i, int64_t heads) {
  const std::string path = index_path(s.path("block_configs"), i);
  if (!entry.is_object()) throw input_error(s.file, path, json_read::shown(entry), "expected an object");
  const json& att = object_at(entry, "attention", s.file, path + ".attention");
  const std::string att_path = path + ".attention";
  const bool no_op = opt_bool(att, "no_op", false, s.file, att_path + ".no_op");
  const bool linear = opt_bool(att, "replace_with_linear", false, s.file, att_path + ".replace_with_linear");
  if (no_op || linear) return block{};
  const std::string group_path = att_path + ".n_heads_in_group";
  const json* g = find(att, "n_heads_in_group");
  if (!g) throw input_error(s.file, group_path, "(missing)", "required unless no_op is true");
  const int64_t group = as_count(*g, s.file, group_path, 1, max_heads);
  if (heads % group != 0)
    throw input_error(s.file, group_path, std::to_string(group),
                      "must divide num_attention_heads = " + std::to_string(heads));
  return block{true, heads / group, s.path("num_attention_heads") + " / " + group_path};
}

}  // namespace

model_geometry build_nemotron_nas(const source& s, base b) {
  const int64_t n = b.num_layers;
  const json& blocks = layer_list(s, "block_configs", n);
  std::vector<block> parsed;
  parsed.reserve(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) parsed.push_back(read_block(s, blocks[i], i, b.heads));
  for (const block& bl : parsed) {
    if (!bl.attention) continue;
    b.kv = bl.kv;
    b.kv_field = bl.kv_field;
    break;
  }
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const block& bl = parsed[static_cast<std::size_t>(i)];
    if (!bl.attention) {
      add_no_attention(m, i);
      continue;
    }
    layer_geometry l{layer_name(i), attn_kind::full, b.heads, bl.kv, b.head_size, b.head_size, 0};
    add_attention(m, std::move(l), b.heads_field, bl.kv_field);
  }
  return m;
}

}  // namespace headroom::hf
