#include "input/record_reader.h"

#include <fmt/format.h>

namespace collbench::report::detail {

ReadError ValueReader<Labels>::read(dom::element value, Labels& out) {
  dom::object object;
  if (value.get_object().get(object)) return ReadError::kType;
  if (!same_as_last(object) && !intern(object)) return ReadError::kType;
  out = last_;
  return ReadError::kNone;
}

bool ValueReader<Labels>::same_as_last(dom::object object) {
  if (!has_last_) return false;
  std::size_t i = 0;
  for (const dom::key_value_pair member : object) {
    std::string_view text;
    bool number = false;
    if (i == items_.size() || items_[i].key != member.key || !text_of(member.value, text, number) ||
        items_[i].value != text || items_[i].number != number) {
      return false;
    }
    ++i;
  }
  return i == items_.size();
}

bool ValueReader<Labels>::intern(dom::object object) {
  has_last_ = false;
  items_.clear();
  for (const dom::key_value_pair member : object) {
    std::string_view text;
    bool number = false;
    if (!text_of(member.value, text, number)) return false;
    items_.push_back({keys_.get(member.key), values_.get(text), number});
  }
  last_ = Labels(items_);
  has_last_ = true;
  return true;
}

bool ValueReader<Labels>::text_of(dom::element value, std::string_view& text, bool& number) {
  number = true;
  switch (value.type()) {
    case dom::element_type::STRING:
      number = false;
      text = value.get_string().value_unsafe();
      return true;
    case dom::element_type::INT64:
      number_ = std::to_string(value.get_int64().value_unsafe());
      break;
    case dom::element_type::UINT64:
      number_ = std::to_string(value.get_uint64().value_unsafe());
      break;
    case dom::element_type::DOUBLE:
      number_ = fmt::format("{}", value.get_double().value_unsafe());
      break;
    default:
      return false;
  }
  text = number_;
  return true;
}

}  // namespace collbench::report::detail
