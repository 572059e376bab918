#include "collbench/reporter.h"

namespace collbench {

void ReporterList::context(const RunContext& context) {
  for (auto& r : reporters_) r->context(context);
}
void ReporterList::section(const Section& section) {
  for (auto& r : reporters_) r->section(section);
}
void ReporterList::row(const ResultRow& row) {
  for (auto& r : reporters_) r->row(row);
}
void ReporterList::iterations(const ResultRow& row,
                              const std::vector<std::vector<double>>& per_rank_us) {
  for (auto& r : reporters_) r->iterations(row, per_rank_us);
}
void ReporterList::end_size() {
  for (auto& r : reporters_) r->end_size();
}
void ReporterList::note(std::string_view text) {
  for (auto& r : reporters_) r->note(text);
}
void ReporterList::finish(const RunTotals& totals) {
  for (auto& r : reporters_) r->finish(totals);
}

}  // namespace collbench
