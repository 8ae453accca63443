// Builder dumps: engine names, dtypes, JSON in both directions with every field checked.
#include "core/check/builder_dump.hpp"

#include <nlohmann/json.hpp>

#include "core/backends/triton.hpp"
#include "core/model/geometry.hpp"
#include "core/util/checked.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom {
namespace jr = json_read;
using nlohmann::json;

namespace {

// The engine's name of each mirror buffer, per backend: vLLM's TritonAttentionMetadataBuilder; its
// FlashInfer builder (the float workspace FlashInfer's plan carves tmp_v / tmp_s out of per step,
// the int workspace and its page-locked host copy the plan's index arrays go to, the persistent
// per-request buffers); its FlashAttention builder on FA3 (the scheduler metadata)
// and the model runner's persistent query_start_loc and seq_lens.
struct name_pair {
  backend be;
  const char* engine;
  const char* mirror;
};
constexpr name_pair buffer_names[] = {
    {backend::triton, "softmax_segm_output", "segm_output"},
    {backend::triton, "softmax_segm_max", "segm_max"},
    {backend::triton, "softmax_segm_expsum", "segm_expsum"},
    {backend::flashinfer, "float_workspace_buffer", "float_workspace"},
    {backend::flashinfer, "int_workspace_buffer", "int_workspace"},
    {backend::flashinfer, "page_locked_int_workspace_buffer", "page_locked_int_workspace"},
    {backend::flashinfer, "paged_kv_indptr", "paged_kv_indptr"},
    {backend::flashinfer, "paged_kv_last_page_len", "paged_kv_last_page_len"},
    {backend::fa3, "scheduler_metadata", "scheduler_metadata"},
    {backend::fa3, "query_start_loc", "query_start_loc"},
    {backend::fa3, "seq_lens", "seq_lens"},
    {backend::triton, "block_table", "block_table"},
    {backend::fa3, "block_table", "block_table"},
};

const char* mirror_name_of(backend be, const std::string& engine) {
  for (const auto& n : buffer_names)
    if (n.be == be && engine == n.engine) return n.mirror;
  return nullptr;
}

// A dimension, size or parameter: a non-negative integer below 2^48 (far above any real buffer).
inline constexpr int64_t max_dumped_value = int64_t{1} << 48;
inline constexpr std::size_t max_dumped_entries = 4096;  // buffers, parameters or dimensions

int64_t parameter_value(const json& v, const std::string& file, const std::string& field) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return jr::as_int(v, file, field, 0, max_dumped_value);
}

dumped_buffer buffer_from_json(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) throw input_error(file, path, jr::shown(j), "a buffer is a JSON object");
  dumped_buffer b;
  b.name = jr::get_string(j, "name", file, path);
  if (b.name.empty()) throw input_error(file, path + "name", "\"\"", "a buffer needs a name");
  b.dtype = jr::get_string(j, "dtype", file, path);
  const int64_t elem = dumped_dtype_bytes(b.dtype);
  if (elem == 0)
    throw input_error(file, path + "dtype", "\"" + b.dtype + "\"",
                      "expected float32, float16, bfloat16, int32, int64 or uint8");
  const json& shape = jr::field(j, "shape", file, path);
  if (!shape.is_array() || shape.size() > max_dumped_entries)
    throw input_error(file, path + "shape", jr::shown(shape), "expected a list of dimensions");
  int64_t bytes = elem;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::string field = path + "shape[" + std::to_string(i) + "]";
    b.shape.push_back(jr::as_int(shape[i], file, field, 0, max_dumped_value));
    if (__builtin_mul_overflow(bytes, b.shape.back(), &bytes) || bytes > max_dumped_value)
      throw input_error(file, field, std::to_string(b.shape.back()), "the buffer's size overflows");
  }
  b.bytes = bytes;
  if (j.contains("bytes")) {
    const int64_t given = jr::get_int(j, "bytes", file, path, 0, max_dumped_value);
    if (given != bytes)
      throw input_error(file, path + "bytes", std::to_string(given),
                        "disagrees with shape and dtype (" + std::to_string(bytes) + " bytes)");
  }
  return b;
}

// The parameters each backend's kernels need, with their ranges, and the buffers it must have.
struct required_parameter {
  const char* name;
  int64_t lo, hi;
};
constexpr required_parameter triton_parameters[] = {
    {"num_heads_q", 1, max_heads},
    {"num_heads_kv", 1, max_heads},
    {"headdim", 1, max_head_size},
    {"headdim_padded", 1, 2 * max_head_size},
    {"seq_threshold_3D", 0, int64_t{1} << 20},
    {"num_par_softmax_segments", triton_segments, triton_segments},
};
constexpr required_parameter flashinfer_parameters[] = {
    {"num_qo_heads", 1, max_heads}, {"num_kv_heads", 1, max_heads}, {"head_dim", 1, max_head_size},
    {"page_size", 1, 1 << 16},      {"use_cuda_graph", 0, 1},
};
// Optional: a dump without them plans with the plan file's flashinfer options.
constexpr required_parameter flashinfer_switches[] = {
    {"use_tensor_cores", 0, 1}, {"disable_split_kv", 0, 1}, {"fa3_prefill", 0, 1}};
constexpr required_parameter fa3_parameters[] = {
    {"num_heads_q", 1, max_heads}, {"num_heads_kv", 1, max_heads}, {"headdim", 1, max_head_size}};
constexpr const char* triton_buffers[] = {"softmax_segm_output", "softmax_segm_max", "softmax_segm_expsum"};

void validate(const builder_dump& d, const std::string& file, const std::string& path) {
  for (std::size_t i = 0; i < d.buffers.size(); ++i)  // the runner's table: [rows][width], both >= 1
    if (d.buffers[i].name == "block_table" &&
        (d.buffers[i].shape.size() != 2 || d.buffers[i].shape[0] < 1 || d.buffers[i].shape[1] < 1))
      throw input_error(file, path + "buffers[" + std::to_string(i) + "].shape",
                        std::to_string(d.buffers[i].shape.size()) + " dimensions",
                        "block_table is [rows, width], both at least 1");
  auto check = [&](const auto& required) {
    for (const auto& r : required) {
      const int64_t v = dumped_parameter(d, r.name, file, path);
      if (v < r.lo || v > r.hi)
        throw input_error(file, path + "parameters." + r.name, std::to_string(v),
                          "must be in " + std::to_string(r.lo) + ".." + std::to_string(r.hi));
    }
  };
  if (d.be == backend::flashinfer) {
    for (const auto& r : flashinfer_switches)
      if (auto it = d.parameters.find(r.name);
          it != d.parameters.end() && (it->second < r.lo || it->second > r.hi))
        throw input_error(file, path + "parameters." + r.name, std::to_string(it->second), "must be 0 or 1");
    return check(flashinfer_parameters);
  }
  if (d.be == backend::fa3) return check(fa3_parameters);
  check(triton_parameters);
  for (const char* name : triton_buffers) {
    bool found = false;
    for (const auto& b : d.buffers) found = found || b.name == name;
    if (!found)
      throw input_error(file, path + "buffers", std::string("(no ") + name + ")", "required for triton");
  }
}

}  // namespace

int64_t dumped_dtype_bytes(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "int64") return 8;
  if (dtype == "uint8" || dtype == "int8") return 1;
  return 0;
}

int64_t dumped_parameter(const builder_dump& d, const std::string& name, const std::string& file,
                         const std::string& path) {
  auto it = d.parameters.find(name);
  if (it == d.parameters.end())
    throw input_error(file, path + "parameters." + name, "(missing)",
                      std::string("required for ") + to_string(d.be));
  return it->second;
}

std::vector<buffer_plan> mirror_buffers(const builder_dump& d) {
  std::vector<buffer_plan> out;
  for (const auto& b : d.buffers)
    if (const char* m = mirror_name_of(d.be, b.name)) out.push_back({m, b.bytes, 1});
  return out;
}

std::string engine_buffer_name(backend be, const std::string& mirror_name) {
  for (const auto& n : buffer_names)
    if (n.be == be && mirror_name == n.mirror) return n.engine;
  return mirror_name;
}

std::vector<std::string> unchecked_buffers(const builder_dump& d) {
  std::vector<std::string> out;
  for (const auto& b : d.buffers)
    if (!mirror_name_of(d.be, b.name)) out.push_back(b.name);
  return out;
}

json to_json(const builder_dump& d) {
  json buffers = json::array();
  for (const auto& b : d.buffers)
    buffers.push_back({{"name", b.name}, {"dtype", b.dtype}, {"shape", b.shape}, {"bytes", b.bytes}});
  json params = json::object();
  for (const auto& [k, v] : d.parameters) params[k] = v;
  return {{"backend", to_string(d.be)}, {"group", d.index},     {"kv_cache_group", d.kv_group},
          {"layers", d.layers},         {"parameters", params}, {"buffers", buffers}};
}

builder_dump builder_dump_from_json(const json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) throw input_error(file, path, jr::shown(j), "a group is a JSON object");
  builder_dump d;
  d.be = parse_backend(jr::get_string(j, "backend", file, path), file, path + "backend");
  d.index = static_cast<int>(jr::get_int(j, "group", file, path, 0, max_dumped_entries));
  d.kv_group = static_cast<int>(jr::get_int_or(j, "kv_cache_group", 0, file, path, 0, max_dumped_entries));
  const json& layers = jr::field(j, "layers", file, path);
  if (!layers.is_array() || layers.empty())
    throw input_error(file, path + "layers", jr::shown(layers), "expected a non-empty list of layer names");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].is_string())
      throw input_error(file, path + "layers[" + std::to_string(i) + "]", jr::shown(layers[i]),
                        "expected a layer name");
    d.layers.push_back(layers[i].get<std::string>());
  }
  const json& params = jr::get_object(j, "parameters", file, path);
  if (params.size() > max_dumped_entries)
    throw input_error(file, path + "parameters", jr::shown(params), "too many parameters");
  for (auto& [k, v] : params.items()) d.parameters[k] = parameter_value(v, file, path + "parameters." + k);
  const json& buffers = jr::field(j, "buffers", file, path);
  if (!buffers.is_array() || buffers.size() > max_dumped_entries)
    throw input_error(file, path + "buffers", jr::shown(buffers), "expected a list of buffers");
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    d.buffers.push_back(buffer_from_json(buffers[i], file, path + "buffers[" + std::to_string(i) + "]."));
    for (std::size_t k = 0; k + 1 < d.buffers.size(); ++k)
      if (d.buffers[k].name == d.buffers.back().name)
        throw input_error(file, path + "buffers[" + std::to_string(i) + "].name",
                          "\"" + d.buffers.back().name + "\"", "given twice");
  }
  validate(d, file, path);
  return d;
}

}  // namespace headroom
