// input_error's message (error.hpp).
#include "core/util/error.hpp"

#include "core/util/one_line.hpp"

namespace headroom {

std::string input_error::compose(const std::string& file, const std::string& field, const std::string& value,
                                 const std::string& why) {
  const std::string where = file.empty() ? std::string("<input>") : one_line(file);
  return where + ": field '" + one_line(field) + "' = " + one_line(value) + ": " + one_line(why);
}

}  // namespace headroom
