// parse_json_text (json_file.hpp): nlohmann's parser driving our own document builder, which
// counts values, bounds the depth and knows the field path of the value being read, so that a
// number the parser refuses (1e400) is reported on its field.
#include <vector>

#include "core/util/json_file.hpp"

namespace headroom {
namespace {

using nlohmann::json;

// The parser's message without its "[json.exception.parse_error.101] " tag.
std::string parser_message(const json::exception& e) {
  const std::string what = e.what();
  const auto tag_end = what.find("] ");
  return tag_end == std::string::npos ? what : what.substr(tag_end + 2);
}

// A SAX handler that builds the document (as nlohmann's own DOM parser does), counts its values
// and keys, bounds its depth and tracks where it is.
class bounded_builder {
 public:
  explicit bounded_builder(const std::string& file) : file_(file) {}

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(json::number_integer_t v) { return add(v); }
  bool number_unsigned(json::number_unsigned_t v) { return add(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(v); }
  bool string(json::string_t& v) { return add(std::move(v)); }
  bool binary(json::binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    count();
    frames_.back().key = k;
    slot_ = &(*frames_.back().node)[k];
    return true;
  }

  bool parse_error(std::size_t byte, const std::string& token, const json::exception& e) {
    if (e.id == 406)  // out_of_range.406: a number that does not fit a double
      throw input_error(file_, path(), token, "number out of range (beyond a double's +-1.8e308)");
    throw input_error(file_, "<json>", "byte " + std::to_string(byte),
                      "malformed JSON: " + parser_message(e));
  }

  json take() { return std::move(root_); }

 private:
  struct frame {
    json* node;
    std::string key;  // objects: the key being read
  };

  // Where the next value goes, spelled as messages spell fields: model.layers[2].head_size.
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const frame& f = frames_[i];
      const bool innermost = i + 1 == frames_.size();  // else its last element is being read
      if (f.node->is_array())
        p += "[" + std::to_string(f.node->size() - (innermost ? 0 : 1)) + "]";
      else
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p.empty() ? "<root>" : p;
  }

  // The outermost field of the value being read (a path 64 levels deep says no more than that).
  std::string top_field() const {
    const bool keyed = !frames_.empty() && frames_.front().node->is_object();
    return keyed ? frames_.front().key : "<root>";
  }

  template <class V>
  bool add(V&& v) {
    place(json(std::forward<V>(v)));
    return true;
  }

  void count() {
    if (++items_ > max_input_items)
      throw input_error(file_, path(), "(item " + std::to_string(items_) + ")",
                        "more than " + std::to_string(max_input_items) +
                            " JSON values and keys; an input file holds at most that many");
  }

  json* place(json v) {
    count();
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *frames_.back().node;
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  bool open(json::value_t t) {
    if (static_cast<int64_t>(frames_.size()) >= max_input_depth)
      throw input_error(file_, top_field(), t == json::value_t::array ? "[..." : "{...",
                        "nested deeper than " + std::to_string(max_input_depth) + " levels");
    json* node = place(json(t));
    frames_.push_back({node, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  const std::string& file_;
  json root_;
  std::vector<frame> frames_;
  json* slot_ = nullptr;
  int64_t items_ = 0;
};

}  // namespace

json parse_json_text(std::string_view text, const std::string& file) {
  bounded_builder b(file);
  json::sax_parse(text.begin(), text.end(), &b);
  return b.take();
}

}  // namespace headroom
