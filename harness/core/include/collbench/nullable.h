// Nullable<T>: a value or null, with std::optional's interface and meaning, kept in the value's
// own bits: null is a value the field never holds (NaN for a measured time or bandwidth, which
// JSON cannot carry; the lowest integer for counts and ranks, which are never negative).
//
// Result rows are read by the million; seven std::optional fields carried a flag each, padded
// to eight bytes, a quarter of a row. Nullable costs nothing beyond the value.
#pragma once

#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <utility>

namespace collbench {

/// How a type marks null. Specialized for the types fields use.
template <typename T>
struct NullBits;

template <std::floating_point T>
struct NullBits<T> {
  static constexpr T null() { return std::numeric_limits<T>::quiet_NaN(); }
  static bool is_null(T value) { return std::isnan(value); }
};

template <std::signed_integral T>
struct NullBits<T> {
  static constexpr T null() { return std::numeric_limits<T>::lowest(); }
  static constexpr bool is_null(T value) { return value == null(); }
};

template <typename T>
class Nullable {
 public:
  using value_type = T;

  constexpr Nullable() : value_(NullBits<T>::null()) {}
  constexpr Nullable(std::nullopt_t) : Nullable() {}
  /// A value; the null bits themselves make a null (NaN, the lowest integer).
  constexpr Nullable(const T& value) : value_(value) {}

  bool has_value() const { return !NullBits<T>::is_null(value_); }
  explicit operator bool() const { return has_value(); }

  const T& operator*() const { return value_; }
  T& operator*() { return value_; }
  const T* operator->() const { return &value_; }
  T* operator->() { return &value_; }
  const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return value_;
  }
  T value_or(const T& fallback) const { return has_value() ? value_ : fallback; }

  void reset() { value_ = NullBits<T>::null(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = T(std::forward<Args>(args)...);
    return value_;
  }

  friend bool operator==(const Nullable& a, const Nullable& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || a.value_ == b.value_);
  }
  friend bool operator==(const Nullable& a, const T& b) { return a.has_value() && a.value_ == b; }

 private:
  T value_;
};

}  // namespace collbench
