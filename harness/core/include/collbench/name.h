// Name: an immutable, interned string. Result rows carry their repeated strings (run id, test,
// backend, host, note) and label sets as interned handles: a copy is one pointer, equality is
// one comparison, and a report reading a million rows holds each distinct string once.
//
// Interned text lives until the process ends. The tools intern what they read and write (tests,
// hosts, run ids, labels), which is small and bounded by the input.
#pragma once

#include <fmt/format.h>

#include <compare>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collbench {

class Name {
 public:
  /// The empty string.
  Name() = default;
  /// Interns `text` (thread-safe).
  explicit Name(std::string_view text);

  const std::string& str() const { return text_ ? *text_ : empty_text(); }
  std::string_view view() const { return str(); }
  bool empty() const { return text_ == nullptr; }

  /// Equal texts are the same interned string.
  friend bool operator==(Name a, Name b) { return a.text_ == b.text_; }
  /// Ordered by text, so sorted output does not depend on interning order.
  friend std::strong_ordering operator<=>(Name a, Name b) {
    if (a.text_ == b.text_) return std::strong_ordering::equal;
    return a.view() <=> b.view();
  }
  friend bool operator==(Name a, std::string_view b) { return a.view() == b; }

  /// A key for hash tables: unique per distinct text.
  std::size_t identity() const { return reinterpret_cast<std::size_t>(text_); }

 private:
  static const std::string& empty_text();
  const std::string* text_ = nullptr;  ///< nullptr for the empty string
};

/// A front for interning from one thread: strings seen before are found without taking the
/// global lock (the results reader meets the same hosts and run ids on every line).
class NameCache {
 public:
  Name get(std::string_view text);

 private:
  std::string_view last_text_;
  Name last_;
  std::unordered_map<std::string_view, Name> seen_;  ///< views into interned text
};

/// One label of a result row (collbench-sweep's collect adds them): a key and its value.
/// Numbers keep their JSON spelling ("16", "0.5") and remember that they were numbers.
struct Label {
  Name key;
  Name value;
  bool number = false;
  friend bool operator==(const Label&, const Label&) = default;
};

/// An immutable, interned set of labels, sorted by key. Copies are one pointer; equal sets are
/// the same interned set.
class Labels {
 public:
  Labels() = default;
  /// Interns the set (sorted by key here; keys must be distinct).
  explicit Labels(std::vector<Label> labels);

  const std::vector<Label>& items() const { return list_ ? *list_ : none(); }
  bool empty() const { return list_ == nullptr; }
  /// The value of `key`, or nullptr.
  const std::string* find(std::string_view key) const;

  friend bool operator==(Labels a, Labels b) { return a.list_ == b.list_; }
  std::size_t identity() const { return reinterpret_cast<std::size_t>(list_); }

 private:
  static const std::vector<Label>& none();
  const std::vector<Label>* list_ = nullptr;  ///< nullptr for no labels
};

inline std::ostream& operator<<(std::ostream& out, Name name) { return out << name.view(); }

}  // namespace collbench

template <>
struct std::hash<collbench::Name> {
  std::size_t operator()(collbench::Name n) const noexcept {
    return std::hash<std::size_t>{}(n.identity());
  }
};
template <>
struct std::hash<collbench::Labels> {
  std::size_t operator()(collbench::Labels l) const noexcept {
    return std::hash<std::size_t>{}(l.identity());
  }
};

template <>
struct fmt::formatter<collbench::Name> : fmt::formatter<std::string_view> {
  auto format(collbench::Name n, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(n.view(), ctx);
  }
};
