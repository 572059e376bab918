// Boxed<T>: an optional value kept on the heap, for the members of a record that most records
// lack. A result row without a precision, a group or an algorithm then carries three pointers
// instead of 184 bytes of empty members: the report holds a million rows at once.
//
// It reads like std::optional<T> (has_value, *, ->, emplace, reset, ==) and records read and
// write it as they do std::optional<T> (collbench/record.h). Copies are deep.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace collbench {

template <typename T>
class Boxed {
 public:
  using value_type = T;

  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): as std::optional
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  Boxed(const Boxed& other) : value_(copy_of(other.value_.get())) {}
  Boxed(Boxed&&) noexcept = default;
  ~Boxed() = default;

  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = copy_of(other.value_.get());
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }
  Boxed& operator=(T value) {
    emplace(std::move(value));
    return *this;
  }
  Boxed& operator=(const std::optional<T>& value) {
    value_ = copy_of(value ? &*value : nullptr);
    return *this;
  }

  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }

 private:
  static std::unique_ptr<T> copy_of(const T* value) {
    return value ? std::make_unique<T>(*value) : nullptr;
  }

  std::unique_ptr<T> value_;
};

}  // namespace collbench
