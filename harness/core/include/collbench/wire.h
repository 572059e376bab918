// Messages between ranks: every value crosses the bootstrap in one encoding, its JSON form
// (collbench/record.h) as CBOR, and is decoded with its type and size checked. No process
// sends raw memory or an ad hoc string format to another.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "collbench/error.h"
#include "collbench/record.h"

namespace collbench::wire {

/// The bytes of one message carrying `value`.
template <typename T>
std::string encode(const T& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(json_value(value));
  return std::string(bytes.begin(), bytes.end());
}

/// The value a message carries. Throws Error(kRuntime) naming `what` (the message's purpose
/// and sender) when the bytes are cut short, are not CBOR, or do not hold a T.
template <typename T>
T decode(std::string_view bytes, std::string_view what) {
  const auto j = nlohmann::json::from_cbor(bytes.begin(), bytes.end(), true, false);
  if (j.is_discarded()) {
    throw_runtime("{}: malformed message ({} bytes that are not a complete CBOR value)", what,
                  bytes.size());
  }
  T value{};
  try {
    json_read(j, value, "message");
  } catch (const RecordError& e) {
    throw_runtime("{}: unexpected message ({})", what, e.what());
  }
  return value;
}

}  // namespace collbench::wire
