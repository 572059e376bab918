#include "collbench/name.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>

namespace collbench {
namespace {

struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Node-based sets: an element's address never changes, so handles stay valid.
struct TextPool {
  std::mutex mutex;
  std::unordered_set<std::string, TextHash, std::equal_to<>> texts;
};

TextPool& text_pool() {
  static TextPool* pool = new TextPool;  // never destroyed: handles outlive static destructors
  return *pool;
}

struct LabelsHash {
  std::size_t operator()(const std::vector<Label>& labels) const {
    std::size_t h = labels.size();
    for (const auto& l : labels) {
      h = h * 1099511628211ull ^ l.key.identity();
      h = h * 1099511628211ull ^ l.value.identity() ^ static_cast<std::size_t>(l.number);
    }
    return h;
  }
};

struct LabelsPool {
  std::mutex mutex;
  std::unordered_set<std::vector<Label>, LabelsHash> sets;
};

LabelsPool& labels_pool() {
  static LabelsPool* pool = new LabelsPool;
  return *pool;
}

}  // namespace

Name::Name(std::string_view text) {
  if (text.empty()) return;
  TextPool& pool = text_pool();
  std::lock_guard lock(pool.mutex);
  auto it = pool.texts.find(text);
  if (it == pool.texts.end()) it = pool.texts.emplace(text).first;
  text_ = &*it;
}

const std::string& Name::empty_text() {
  static const std::string* text = new std::string;
  return *text;
}

Name NameCache::get(std::string_view text) {
  // Consecutive lines nearly always repeat a field's value: one compare, no hash.
  if (!last_text_.empty() && text == last_text_) return last_;
  if (text.empty()) return {};
  auto it = seen_.find(text);
  if (it == seen_.end()) {
    const Name name(text);
    it = seen_.emplace(name.view(), name).first;
  }
  last_text_ = it->first;
  last_ = it->second;
  return last_;
}

Labels::Labels(std::vector<Label> labels) {
  if (labels.empty()) return;
  std::sort(labels.begin(), labels.end(),
            [](const Label& a, const Label& b) { return a.key < b.key; });
  LabelsPool& pool = labels_pool();
  std::lock_guard lock(pool.mutex);
  list_ = &*pool.sets.insert(std::move(labels)).first;
}

const std::vector<Label>& Labels::none() {
  static const std::vector<Label>* list = new std::vector<Label>;
  return *list;
}

const std::string* Labels::find(std::string_view key) const {
  for (const auto& l : items()) {
    if (l.key == key) return &l.value.str();
  }
  return nullptr;
}

}  // namespace collbench
