// Decoding records from simdjson's DOM, generated from their field lists (collbench/record.h):
// one ValueReader per C++ type a field may have, and a RecordReader that finds the field each
// member names through a NameTable and hands the member's value to that field's reader. Each
// reader keeps what makes the next line cheap (the strings, enum values and labels it last saw).
//
// The rules are the report's, which forgive more than collbench/record.h: an int must lie in
// [0, INT32_MAX], members of a nested record may be missing (older collbench versions wrote
// fewer), and a member no field names is left alone.
#pragma once

#include <simdjson.h>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "collbench/name.h"
#include "collbench/record.h"
#include "input/name_table.h"

namespace collbench::report::detail {

namespace dom = simdjson::dom;

/// Why a member's value was not taken.
enum class ReadError {
  kNone,
  kType,    ///< the wrong JSON type, or a value the field cannot hold
  kNested,  ///< a member of the nested record it holds is such a value
};

/// Reads a JSON value into a field of type T. Specialized below for every type a decoded record
/// holds.
template <typename T>
class ValueReader;

/// Counts, ranks and repetitions: an integer in [0, INT32_MAX].
template <>
class ValueReader<int> {
 public:
  static ReadError read(dom::element value, int& out) {
    std::int64_t v = 0;
    if (value.get_int64().get(v) || v < 0 || v > std::numeric_limits<int>::max()) {
      return ReadError::kType;
    }
    out = static_cast<int>(v);
    return ReadError::kNone;
  }
};

/// Any 64-bit integer (wrong elements are summed over ranks).
template <>
class ValueReader<std::int64_t> {
 public:
  static ReadError read(dom::element value, std::int64_t& out) {
    return value.get_int64().get(out) ? ReadError::kType : ReadError::kNone;
  }
};

/// Sizes and sample counts: a non-negative integer that fits T.
template <typename T>
requires std::unsigned_integral<T> &&(!std::same_as<T, bool>)class ValueReader<T> {
 public:
  static ReadError read(dom::element value, T& out) {
    std::uint64_t v = 0;
    if (value.get_uint64().get(v) || v > std::numeric_limits<T>::max()) return ReadError::kType;
    out = static_cast<T>(v);
    return ReadError::kNone;
  }
};

/// Any JSON number.
template <>
class ValueReader<double> {
 public:
  static ReadError read(dom::element value, double& out) {
    return value.get_double().get(out) ? ReadError::kType : ReadError::kNone;
  }
};

/// true or false (a result's precision.converged).
template <>
class ValueReader<bool> {
 public:
  static ReadError read(dom::element value, bool& out) {
    return value.get_bool().get(out) ? ReadError::kType : ReadError::kNone;
  }
};

/// A string, interned.
template <>
class ValueReader<Name> {
 public:
  ReadError read(dom::element value, Name& out) {
    if (value.type() != dom::element_type::STRING) return ReadError::kType;
    out = cache_.get(value.get_string().value_unsafe());
    return ReadError::kNone;
  }

 private:
  NameCache cache_;
};

/// One of the enum's names, exactly.
template <NamedEnum E>
class ValueReader<E> {
 public:
  ReadError read(dom::element value, E& out) {
    if (value.type() != dom::element_type::STRING) return ReadError::kType;
    const std::string_view text = value.get_string().value_unsafe();
    // Consecutive lines nearly always repeat the value: its name is compared first.
    if (last_ >= names_.size() || names_[last_] != text) {
      last_ = 0;
      while (last_ < names_.size() && names_[last_] != text) ++last_;
      if (last_ == names_.size()) return ReadError::kType;
    }
    out = static_cast<E>(last_);
    return ReadError::kNone;
  }

 private:
  std::span<const std::string_view> names_ = enum_names(E{});
  std::size_t last_ = 0;
};

/// Two ranks, [first, second].
template <>
class ValueReader<Pair> {
 public:
  static ReadError read(dom::element value, Pair& out) {
    dom::array array;
    if (value.get_array().get(array)) return ReadError::kType;
    int* const targets[] = {&out.first, &out.second};
    std::size_t count = 0;
    for (const dom::element item : array) {
      if (count == 2 || ValueReader<int>::read(item, *targets[count]) != ReadError::kNone) {
        return ReadError::kType;
      }
      ++count;
    }
    return count == 2 ? ReadError::kNone : ReadError::kType;
  }
};

/// An array of T (a group's hosts and ranks); the vector keeps its capacity between lines.
template <typename T>
class ValueReader<std::vector<T>> {
 public:
  ReadError read(dom::element value, std::vector<T>& out) {
    dom::array array;
    if (value.get_array().get(array)) return ReadError::kType;
    out.clear();
    for (const dom::element item : array) {
      const ReadError error = item_.read(item, out.emplace_back());
      if (error != ReadError::kNone) return error;
    }
    return ReadError::kNone;
  }

 private:
  ValueReader<T> item_;
};

/// An object of strings and numbers; numbers keep their JSON spelling ("16", "0.5"). A run's
/// lines all carry the same labels, so a line's are first compared with the previous line's.
template <>
class ValueReader<Labels> {
 public:
  ReadError read(dom::element value, Labels& out);

 private:
  bool same_as_last(dom::object object);
  bool intern(dom::object object);
  /// The text of a label's value; false for a value that is neither a string nor a number.
  bool text_of(dom::element value, std::string_view& text, bool& number);

  NameCache keys_, values_;
  std::vector<Label> items_;  ///< the last labels read, in their line's order
  Labels last_;
  bool has_last_ = false;
  std::string number_;  ///< a number's text
};

/// Reads the members of a JSON object that name fields of record R, each with its field's
/// ValueReader.
template <Record R>
class RecordReader {
  using Fields = decltype(R::fields());

 public:
  static constexpr std::size_t kCount = std::tuple_size_v<Fields>;
  /// A set of fields: bit i is field i of R::fields().
  using Mask = std::uint64_t;
  static_assert(kCount <= 64, "a Mask holds 64 fields");

  /// The fields' names, in list order.
  static constexpr std::array<std::string_view, kCount> kNames = std::apply(
      [](const auto&... field) { return std::array<std::string_view, kCount>{field.name...}; },
      R::fields());
  /// The fields a record must have (Presence::kRequired).
  static constexpr Mask kRequired = std::apply(
      [](const auto&... field) {
        Mask mask = 0, bit = 1;
        ((mask |= field.presence == Presence::kRequired ? bit : 0, bit <<= 1), ...);
        return mask;
      },
      R::fields());

  /// The index of the field of `member`.
  template <auto member>
  static constexpr std::size_t index_of() {
    std::size_t index = kCount, i = 0;
    for_each_field<R>([&](const auto& field) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field.member)>, decltype(member)>) {
        if (field.member == member) index = i;
      }
      ++i;
    });
    return index;
  }

  /// Reads each member of `object` that names a field into that field of `out`. Calls
  /// `other(key, value)` for each member that names none, and `failed(index, error)` for each
  /// field whose value was not taken. Returns the fields seen.
  template <typename Other, typename Failed>
  Mask read(dom::object object, R& out, Other&& other, Failed&& failed) {
    static constexpr auto kReadFunctions = read_functions(std::make_index_sequence<kCount>{});
    Mask seen = 0;
    for (const dom::key_value_pair member : object) {
      const std::size_t index = kTable.find(member.key);
      if (index == kCount) {
        other(member.key, member.value);
        continue;
      }
      seen |= Mask{1} << index;
      const ReadError error = kReadFunctions[index](readers_, member.value, out);
      if (error != ReadError::kNone) failed(index, error);
    }
    return seen;
  }

  /// The reader of field I (what it last read, for nested records).
  template <std::size_t I>
  const auto& reader() const {
    return std::get<I>(readers_);
  }

 private:
  template <typename Sequence>
  struct ReadersOf;
  template <std::size_t... I>
  struct ReadersOf<std::index_sequence<I...>> {
    using type = std::tuple<ValueReader<typename std::tuple_element_t<I, Fields>::value_type>...>;
  };
  using Readers = typename ReadersOf<std::make_index_sequence<kCount>>::type;
  using ReadFunction = ReadError (*)(Readers&, dom::element, R&);

  template <std::size_t I>
  static ReadError read_field(Readers& readers, dom::element value, R& out) {
    static constexpr auto kMember = std::get<I>(R::fields()).member;
    return std::get<I>(readers).read(value, out.*kMember);
  }

  template <std::size_t... I>
  static constexpr std::array<ReadFunction, kCount> read_functions(std::index_sequence<I...>) {
    return {&read_field<I>...};
  }

  static constexpr NameTable<kCount> kTable{kNames};

  Readers readers_;
};

/// A nested record: an object whose members are read like a line's, none of them required.
template <Record R>
class ValueReader<R> {
 public:
  using Mask = typename RecordReader<R>::Mask;

  ReadError read(dom::element value, R& out) {
    dom::object object;
    if (value.get_object().get(object)) return ReadError::kType;
    bool failed = false;
    seen_ = fields_.read(
        object, out, [](std::string_view, dom::element) {},
        [&failed](std::size_t, ReadError) { failed = true; });
    return failed ? ReadError::kNested : ReadError::kNone;
  }

  /// The fields the last object read had.
  Mask seen() const { return seen_; }

 private:
  RecordReader<R> fields_;
  Mask seen_ = 0;
};

/// null, or a T (std::optional<T> and Nullable<T> alike).
template <typename Maybe>
class NullOrValueReader {
  using T = typename Maybe::value_type;

 public:
  ReadError read(dom::element value, Maybe& out) {
    if (value.is_null()) {
      out.reset();
      return ReadError::kNone;
    }
    return reader_.read(value, out.emplace());
  }

  const ValueReader<T>& value_reader() const { return reader_; }

 private:
  ValueReader<T> reader_;
};

template <typename T>
class ValueReader<std::optional<T>> : public NullOrValueReader<std::optional<T>> {};
template <typename T>
class ValueReader<Nullable<T>> : public NullOrValueReader<Nullable<T>> {};
template <typename T>
class ValueReader<Boxed<T>> : public NullOrValueReader<Boxed<T>> {};

}  // namespace collbench::report::detail
