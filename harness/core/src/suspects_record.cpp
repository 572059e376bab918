#include "collbench/suspects_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "collbench/text.h"

namespace collbench {

namespace {

// Whether a host name can go into an exclude list as it is: a hostname's characters only. Host
// names come from the input, which could hold a newline or a comma.
bool plain_hostname(std::string_view host) {
  return !host.empty() && host.front() != '#' && host.front() != '-' &&
         std::all_of(host.begin(), host.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
         });
}

// A host name on a comment line: printable ASCII, anything else escaped.
std::string comment_text(std::string_view host) {
  std::string out;
  for (unsigned char c : host) {
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace

nlohmann::json suspects_schema_tag() { return {{"name", "collbench-suspects"}, {"version", 1}}; }

std::string suspects_json(const SuspectsRecord& record) {
  nlohmann::json j = json_value(record);
  j["schema"] = suspects_schema_tag();
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

SuspectsRecord read_suspects_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw RecordError(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("schema") || j["schema"] != suspects_schema_tag()) {
    throw RecordError("not a collbench-suspects version 1 document");
  }
  j.erase("schema");
  SuspectsRecord record;
  read_record(j, record, "");
  return record;
}

std::string NamedSwitch::uplink_text() const {
  return fmt::format("{} (uplink to {}{})", node, parent,
                     alike.empty() ? std::string()
                                   : fmt::format("; or the uplink of {}: no pair tells them apart",
                                                 join(alike, ", ")));
}

std::string suspects_text(const SuspectsRecord& record) {
  std::string text, comments;
  for (const auto& s : record.hosts) {
    if (plain_hostname(s.host))
      text += fmt::format("{}\n", s.host);
    else
      comments +=
          fmt::format("# slow host with a name that is not a hostname: {}\n", comment_text(s.host));
  }
  text += comments;
  for (const auto& l : record.links) {
    text += fmt::format("# slow link: {} <-> {}: {} of the median pair\n", comment_text(l.a),
                        comment_text(l.b), percent_text(l.ratio));
  }
  for (const auto& s : record.switches) {
    text += fmt::format("# slow switch: {}: {} of the pairs that do not cross it\n",
                        comment_text(s.uplink_text()), percent_text(s.ratio));
  }
  return text;
}

}  // namespace collbench
