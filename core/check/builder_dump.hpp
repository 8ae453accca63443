// A metadata builder as an engine allocated it (docs/plan-schema.md): the attention group's layers,
// the scalar parameters its kernels receive and every buffer it allocated, named as the engine
// names it, with dtype and shape. `headroom plan` writes these from the mirror; `headroom verify`
// reads them from a file and the checker plans with them instead of the mirror's formulas. A new
// buffer or parameter is a new named entry: names headroom does not know are kept and reported as
// not checked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/backends/buffers.hpp"
#include "core/engine/engine.hpp"

namespace headroom {

struct dumped_buffer {
  std::string name;            // the engine's name, e.g. softmax_segm_output
  std::string dtype;           // torch's name: float32, bfloat16, float16, int32, int64, uint8
  std::vector<int64_t> shape;  // every dimension >= 0
  int64_t bytes = 0;           // product(shape) * dtype bytes, checked when read
  bool operator==(const dumped_buffer&) const = default;
};

struct builder_dump {
  backend be = backend::triton;
  int index = 0;     // attention group index (over the groups of one backend)
  int kv_group = 0;  // the KV-cache group it splits
  std::vector<std::string> layers;
  std::map<std::string, int64_t> parameters;  // scalar plan parameters, by the engine's names
  std::vector<dumped_buffer> buffers;
  bool operator==(const builder_dump&) const = default;
};

// Bytes per element of a dtype name; 0 for a name headroom does not know.
int64_t dumped_dtype_bytes(const std::string& dtype);

// A parameter the builder must have; input_error naming `path`.parameters.NAME when missing.
int64_t dumped_parameter(const builder_dump& d, const std::string& name, const std::string& file,
                         const std::string& path);

// The dumped buffers as the mirror's plan names them (segm_output for softmax_segm_output, ...),
// with their capacities; buffers the mirror has no counterpart for are left out.
std::vector<buffer_plan> mirror_buffers(const builder_dump& d);
// The engine's name of a mirror buffer of this backend (the name itself when there is none).
std::string engine_buffer_name(backend be, const std::string& mirror_name);
// Dumped buffers headroom does not check (no mirror counterpart), by name.
std::vector<std::string> unchecked_buffers(const builder_dump& d);

nlohmann::json to_json(const builder_dump& d);
// Throws input_error naming file and field (under `path`, e.g. "ranks[0].groups[2].") for anything
// missing, mistyped, negative, or a buffer whose bytes disagree with its shape and dtype.
builder_dump builder_dump_from_json(const nlohmann::json& j, const std::string& file,
                                    const std::string& path);

}  // namespace headroom
