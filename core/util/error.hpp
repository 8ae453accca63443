// Error tiers of the library (STYLE.md): input_error for bad user input (the CLI maps it to exit 2),
// overflow_error for checked index arithmetic. Library code throws; it never exits.
#pragma once

#include <stdexcept>
#include <string>

namespace headroom {

// Bad input: names the file, the field and the value in one message. Every part is shown through
// one_line (one_line.hpp): whatever a file or a flag holds, the message is one bounded line.
class input_error : public std::runtime_error {
 public:
  input_error(std::string file, std::string field, std::string value, std::string why)
      : std::runtime_error(compose(file, field, value, why)),
        file_(std::move(file)),
        field_(std::move(field)),
        value_(std::move(value)),
        why_(std::move(why)) {}

  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& why() const { return why_; }

  // The same error attributed to `file` when it was thrown where the file is not known (a target
  // that cannot run a layer); unchanged when it already names one.
  input_error in_file(const std::string& file) const {
    return file_.empty() ? input_error(file, field_, value_, why_) : *this;
  }

 private:
  static std::string compose(const std::string& file, const std::string& field, const std::string& value,
                             const std::string& why);
  std::string file_, field_, value_, why_;
};

// 64-bit index arithmetic that would wrap: reported, never silently wrapped.
class overflow_error : public std::overflow_error {
 public:
  explicit overflow_error(const std::string& what) : std::overflow_error(what) {}
};

}  // namespace headroom
