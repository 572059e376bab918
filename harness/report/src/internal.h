// Pieces shared by the report's writers (HTML, Markdown); not part of the public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collbench/report/report.h"

namespace collbench::report::detail {

std::string markdown_table(const Table& table);
/// `css_class` goes on the <table>.
std::string html_table(const Table& table, std::string_view css_class);

/// "collbench report: <campaign>" (or the --title).
std::string report_title(const ResultSet& set, const ReportOptions& options);
/// "variant demo · backend mpi · 1 node · 4 ranks · mode batch": what every series shares.
std::string constant_dims(const Model& model);
/// "8 B, 32 B" or "8 B – 512 KiB (9 sizes)".
std::string sizes_text(const std::vector<std::uint64_t>& sizes);
/// Number of runs over all configurations.
std::size_t run_count(const Model& model);
/// A point's busbw as shown: "—" when it is not known (see Point::has_busbw).
std::string busbw_text(const Point& p);

/// The sentence above a view's algorithm table (HTML and Markdown).
inline constexpr std::string_view kAlgorithmNote =
    "Algorithm by size: what the library ran each size with (algorithm/protocol; * where calls "
    "chose differently). On 2 nodes Tree and NVLS move less data over the network than the "
    "bus-bandwidth formula assumes, so their busbw reads above a ring's.";

Table problems_table(const ResultSet& set, std::size_t limit);
Table problem_counts_table(const ResultSet& set);
Table fingerprint_table(const std::vector<Fingerprint>& prints);
/// "Series" and the settings each configuration's library changed from its launch environment;
/// no rows when none did.
Table changed_settings_table(const std::vector<Fingerprint>& prints);
Table env_table(const std::vector<EnvDifference>& differences);

/// Comparison tables: the points with a given verdict, a per-test summary, and the unmatched.
Table verdict_table(const Comparison& c, Verdict verdict);
Table per_test_table(const Comparison& c);
Table unmatched_table(const Comparison& c);
/// One line: "REGRESSION: 3 of 120 matched points ..." / "OK: ...".
std::string verdict_line(const Comparison& c);
std::string dims_text(const std::vector<Dim>& dims);
/// A CSV cell: `text` as is, or quoted (RFC 4180) when it holds a comma, quote or line break.
std::string csv_escape(std::string_view text);

}  // namespace collbench::report::detail

namespace collbench::report::detail {

/// The comparison page (index.html in comparison mode).
std::string comparison_html(const ResultSet& baseline_set, const Model& baseline,
                            const ResultSet& candidate_set, const Model& candidate,
                            const Comparison& comparison, const std::vector<Chart>& ratio_charts,
                            const std::vector<Chart>& overlay_charts, const ReportOptions& options);

}  // namespace collbench::report::detail
