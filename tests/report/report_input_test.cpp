// Bad input: every case is reported with file and line and skipped (or refused), never a crash
// and never an empty report presented as success.
#include <gtest/gtest.h>

#include <filesystem>

#include "collbench/error.h"
#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::dump_diagnostics;
using testing::has;
using testing::run_code;
using testing::run_text;
using testing::RunSpec;
using testing::TempDir;

TEST(ReportInput, TruncatedLastLineIsReportedAndTheRestUsed) {
  RunSpec s;
  const std::string full = run_text(s);
  const std::string cut =
      testing::result_line(s, "all_reduce", 1 << 21).dump().substr(0, 120);  // no newline
  TempDir dir;
  dir.write("run.jsonl", full + cut);
  const auto set = read_results({dir.str()});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  const std::uint64_t last_line = 1 + s.sizes.size() + 1;
  EXPECT_TRUE(has(set, Diagnostic::Kind::kTruncated, "ends mid-record", last_line))
      << dump_diagnostics(set);
  EXPECT_EQ(set.diagnostics.front().file, dir.path().filename().string() + "/run.jsonl");
  // A broken line in the middle is invalid JSON, not truncation.
  TempDir mid;
  mid.write("run.jsonl",
            full.substr(0, full.find('\n') + 1) + cut + "\n" + full.substr(full.find('\n') + 1));
  const auto set2 = read_results({mid.str()});
  EXPECT_TRUE(has(set2, Diagnostic::Kind::kInvalidJson, "not valid JSON", 2))
      << dump_diagnostics(set2);
  EXPECT_EQ(set2.rows.size(), s.sizes.size());
}

TEST(ReportInput, NewerSchemaIsRefusedWithTheFix) {
  RunSpec s;
  std::string text = run_text(s);
  // One version past the reader's own, whatever that is.
  const std::string current = fmt::format("\"version\":{}", kSchemaVersion);
  const std::string newer = fmt::format("\"version\":{}", kSchemaVersion + 1);
  for (auto pos = text.find(current); pos != std::string::npos; pos = text.find(current, pos)) {
    text.replace(pos, current.size(), newer);
  }
  TempDir dir;
  dir.write("future.jsonl", text);
  const auto set = read_results({dir.str()});
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kNewerSchema,
                  fmt::format("schema version {}", kSchemaVersion + 1)))
      << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kNewerSchema, "at least as new"));
  ReportOptions o;
  o.inputs = {dir.str()};
  o.output = (dir.path() / "out").string();
  EXPECT_EQ(run_code(o), ExitCode::kUsage);  // nothing usable: refused, not an empty report
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "index.html"));
}

TEST(ReportInput, DuplicateRowsInAFileAndAcrossFilesAreSkipped) {
  RunSpec s;
  TempDir dir;
  dir.write("a.jsonl", run_text(s) + run_text(s));  // the same run appended twice
  dir.write("copy/b.jsonl", run_text(s));           // and copied elsewhere
  const auto set = read_results({dir.str()});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), 2 * s.sizes.size() + 2);  // rows + 2 contexts
  EXPECT_TRUE(has(set, Diagnostic::Kind::kDuplicate, "duplicate of")) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kDuplicate, "context of run"));
}

TEST(ReportInput, OneFileNamedSeveralWaysIsReadOnceUnderTheNameBelowItsDirectory) {
  // The directory, the file itself spelt with "./" and "..", a symbolic and a hard link to it:
  // one file, read once, shown as the directory's name plus the path below it.
  RunSpec s;
  TempDir dir;
  const auto file = dir.write("runs/sub/a.jsonl", run_text(s));
  std::filesystem::create_symlink(file, dir.path() / "link.jsonl");
  std::filesystem::create_hard_link(file, dir.path() / "hard.jsonl");
  const std::string runs = (dir.path() / "runs").string();
  const auto files =
      list_input_files({runs, runs + "/./sub/../sub/a.jsonl", (dir.path() / "link.jsonl").string(),
                        (dir.path() / "hard.jsonl").string()});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].display, "runs/sub/a.jsonl");
  const auto set = read_results({runs, (dir.path() / "link.jsonl").string()});
  EXPECT_EQ(set.files, std::vector<std::string>{"runs/sub/a.jsonl"});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), 0u) << dump_diagnostics(set);
}

TEST(ReportInput, DuplicatesAmongManyRowsKeepTheFirstOfEach) {
  // Enough rows that the duplicates are found in two halves side by side (dedup.cpp): 60,000
  // measurements (one per -N cycle), then the same 60,000 again, so that every duplicate lies
  // in the second half and its first in the first.
  RunSpec s;
  std::string once;
  constexpr int kCycles = 60'000;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    auto row = testing::result_line(s, "all_reduce", 1024);
    row["cycle"] = cycle;
    once += row.dump() + "\n";
  }
  TempDir dir;
  dir.write("cycles.jsonl", testing::context_line(s).dump() + "\n" + once + once);
  const auto set = read_results({dir.str()});
  ASSERT_EQ(set.rows.size(), static_cast<std::size_t>(kCycles)) << dump_diagnostics(set);
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), static_cast<std::uint64_t>(kCycles));
  for (int k = 0; k < kCycles; ++k) {
    ASSERT_EQ(set.rows[k].cycle, k);
    ASSERT_EQ(set.rows[k].line, static_cast<std::uint32_t>(k + 2));  // the first of each
  }
  EXPECT_TRUE(has(set, Diagnostic::Kind::kDuplicate, "cycles.jsonl:2 (", kCycles + 2))
      << dump_diagnostics(set);
}

TEST(ReportInput, SplitGroupsOfOneRunAreNotDuplicates) {
  // --split: every group of a round, and every round, measures the same test and size in one
  // run; only the same group and round measured twice is a duplicate.
  RunSpec s;
  std::string text = testing::context_line(s).dump() + "\n";
  for (int round = 0; round < 3; ++round) {
    for (int index = 0; index < 2; ++index) {
      auto row = testing::result_line(s, "all_reduce", 1024);
      row["group"] = {{"mode", "pairs"},
                      {"index", index},
                      {"round", round},
                      {"hosts", nlohmann::json::array(
                                    {fmt::format("h{}", index), fmt::format("h{}", round + 2)})},
                      {"ranks", nlohmann::json::array({index, round + 2})}};
      text += row.dump() + "\n";
      if (round == 2 && index == 1) text += row.dump() + "\n";  // appended twice
    }
  }
  TempDir dir;
  dir.write("split.jsonl", text);
  const auto set = read_results({dir.str()});
  EXPECT_EQ(set.rows.size(), 6u) << dump_diagnostics(set);
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), 1u) << dump_diagnostics(set);
  for (const auto& row : set.rows) {
    ASSERT_TRUE(row.group.has_value());
    EXPECT_EQ(row.group->hosts.size(), 2u) << row.group->round << " " << row.group->index;
    EXPECT_EQ(row.group->ranks.size(), 2u);
  }
}

TEST(ReportInput, FailedStatusRowsAreKeptForCsvButNotCharted) {
  RunSpec s;
  auto wrong = testing::result_line(s, "all_reduce", 64);
  wrong["status"] = "wrong";
  wrong["wrong"] = 7;
  auto unsupported = testing::result_line(s, "all_reduce", 128);
  unsupported["status"] = "unsupported";
  for (const char* k :
       {"time_us", "algbw_gbps", "busbw_gbps", "slowest_rank", "slowest_host", "wrong"}) {
    unsupported[k] = nullptr;
  }
  unsupported["note"] = "no such op";
  const auto set = read_results_texts(
      {{"r.jsonl", run_text(s) + wrong.dump() + "\n" + unsupported.dump() + "\n"}});
  EXPECT_EQ(set.rows.size(), s.sizes.size() + 2);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kFailedStatus, "7 wrong elements", 5))
      << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kFailedStatus, "no such op", 6));
  const Model model = build_model(set);
  EXPECT_EQ(model.rows_failed, 2u);
  EXPECT_EQ(model.rows_used, s.sizes.size());
  ASSERT_EQ(model.series.size(), 1u);
  EXPECT_EQ(model.series[0].points.size(), s.sizes.size());  // 64 and 128 B are not points
  std::string csv;
  write_results_csv(set, model, [&csv](std::string_view t) { csv += t; });
  EXPECT_NE(csv.find(",wrong,"), std::string::npos);
  EXPECT_NE(csv.find(",unsupported,no such op"), std::string::npos);
}

TEST(ReportInput, NonCollbenchFilesAreSkippedWithOneLineEach) {
  RunSpec s;
  TempDir dir;
  dir.write("good.jsonl", run_text(s));
  dir.write("other.jsonl", "{\"foo\": 1}\n{\"foo\": 2}\n");
  dir.write("notes.jsonl", "these are my notes\nnot json at all\n");
  dir.write("binary.jsonl", std::string("\x00\x01\xff\xfe garbage\n", 14));
  dir.write("ignored.txt", "not read: only *.jsonl below a directory");
  const auto set = read_results({dir.str()});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_EQ(set.files.size(), 4u);
  EXPECT_EQ(set.count(Diagnostic::Kind::kNotCollbench), 3u) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kNotCollbench, "not a collbench results file"));
  // A file named directly is read whatever its name.
  const auto p = dir.write("named.txt", run_text(s));
  EXPECT_EQ(read_results({p.string()}).rows.size(), s.sizes.size());
}

TEST(ReportInput, BadRecordsNameTheField) {
  RunSpec s;
  auto missing = testing::result_line(s, "all_reduce", 64);
  missing.erase("bytes");
  auto mistyped = testing::result_line(s, "all_reduce", 128);
  mistyped["nranks"] = "four";
  const auto set = read_results_texts(
      {{"r.jsonl", run_text(s) + missing.dump() + "\n" + mistyped.dump() + "\n"}});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "without required field(s) bytes", 5))
      << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "nranks", 6));
}

TEST(ReportInput, EveryMissingRequiredFieldIsNamed) {
  RunSpec s;
  std::vector<InputText> texts{{"good.jsonl", run_text(s)}};
  for_each_field<ResultRow>([&](const auto& field) {
    if (field.presence != Presence::kRequired) return;
    auto line = testing::result_line(s, "all_reduce", 64);
    line.erase(std::string(field.name));
    texts.push_back({std::string(field.name) + ".jsonl", line.dump() + "\n"});
  });
  const auto set = read_results_texts(texts);
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), texts.size() - 1);
  for (std::size_t i = 1; i < texts.size(); ++i) {
    const std::string name = texts[i].name.substr(0, texts[i].name.size() - 6);
    EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "without required field(s) " + name + ";"))
        << name << "\n"
        << dump_diagnostics(set);
  }
}

TEST(ReportInput, NamesOutsideAnEnumAreWrongValues) {
  RunSpec s;
  std::string text = run_text(s);
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"dtype", "fp32"},
                                                        {"op", "SUM"},
                                                        {"placement", "inplace"},
                                                        {"mode", "eager"},
                                                        {"status", "failed"}}) {
    auto line = testing::result_line(s, "all_reduce", 64);
    line[field] = value;
    text += line.dump() + "\n";
  }
  const auto set = read_results_texts({{"r.jsonl", text}});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  std::uint64_t line = 1 + s.sizes.size();
  for (const char* field : {"dtype", "op", "placement", "mode", "status"}) {
    EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord,
                    std::string("wrong type or value: ") + field + ";", ++line))
        << field << "\n"
        << dump_diagnostics(set);
  }
}

TEST(ReportInput, TimesNeedOnlyTheHeadlineTime) {
  RunSpec s;
  auto headline_only = testing::result_line(s, "all_reduce", 64);
  headline_only["time_us"] = {{"reported", 5.0}};
  auto without_headline = testing::result_line(s, "all_reduce", 128);
  without_headline["time_us"].erase("reported");
  const auto set = read_results_texts(
      {{"r.jsonl", run_text(s) + headline_only.dump() + "\n" + without_headline.dump() + "\n"}});
  EXPECT_EQ(set.rows.size(), s.sizes.size() + 1) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "wrong type or value: time_us;", 6))
      << dump_diagnostics(set);
}

TEST(ReportInput, ContextRecordsNameTheMemberThatDoesNotFit) {
  RunSpec s;
  auto context = testing::context_line(s);
  context["hosts"][0]["ranks"] = "0-3";
  std::string text = run_text(s);
  text = context.dump() + "\n" + text.substr(text.find('\n') + 1);
  const auto set = read_results_texts({{"r.jsonl", text}});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_TRUE(set.contexts.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord,
                  "context record: hosts[0].ranks: expected an array, got string; skipped", 1))
      << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kNoContext, "no context line"));
}

TEST(ReportInput, WindowsLineEndingsAndAByteOrderMarkAreAccepted) {
  RunSpec s;
  std::string text = "\xEF\xBB\xBF";
  const std::string plain = run_text(s);
  for (char c : plain) {
    if (c == '\n') text += '\r';
    text += c;
  }
  const auto set = read_results_texts({{"r.jsonl", text + "\r\n\r\n"}});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_TRUE(set.diagnostics.empty()) << dump_diagnostics(set);
}

TEST(ReportInput, RowsWithoutContextAreUsedAndReported) {
  RunSpec s;
  std::string text = run_text(s);
  text = text.substr(text.find('\n') + 1);  // drop the context line
  const auto set = read_results_texts({{"r.jsonl", text}});
  EXPECT_EQ(set.rows.size(), s.sizes.size());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kNoContext, "no context line")) << dump_diagnostics(set);
}

TEST(ReportInput, ManyBadLinesAreCountedAndCapped) {
  std::string text;
  RunSpec s;
  text = run_text(s);
  for (int i = 0; i < 100; ++i) text += "{broken\n";
  const auto set = read_results_texts({{"r.jsonl", text}});
  EXPECT_EQ(set.count(Diagnostic::Kind::kInvalidJson), 100u);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kInvalidJson, "80 more line(s)")) << dump_diagnostics(set);
}

TEST(ReportInput, EmptyDirectoryAndMissingPathsAreUsageErrors) {
  TempDir dir;
  ReportOptions o;
  o.inputs = {dir.str()};
  o.output = (dir.path() / "out").string();
  try {
    run(o, nullptr, nullptr);
    FAIL() << "an empty directory must not produce a report";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("no results files"), std::string::npos) << e.what();
  }
  o.inputs = {(dir.path() / "missing").string()};
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
  // Only failed rows: nothing to chart.
  RunSpec s;
  auto wrong = testing::result_line(s, "all_reduce", 64);
  wrong["status"] = "wrong";
  dir.write("only-wrong.jsonl", testing::context_line(s).dump() + "\n" + wrong.dump() + "\n");
  o.inputs = {dir.str()};
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
}

TEST(ReportInput, StrictTurnsProblemsIntoErrors) {
  RunSpec s;
  TempDir dir;
  dir.write("run.jsonl", run_text(s) + "{\"cut");
  ReportOptions o;
  o.inputs = {dir.str()};
  o.output = (dir.path() / "out").string();
  EXPECT_EQ(run_code(o), ExitCode::kOk);
  o.strict = true;
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
}

TEST(ReportInput, UnwritableOutputIsARuntimeError) {
  RunSpec s;
  TempDir dir;
  dir.write("run.jsonl", run_text(s));
  dir.write("occupied", "a file where the report directory should go");
  ReportOptions o;
  o.inputs = {(dir.path() / "run.jsonl").string()};
  o.output = (dir.path() / "occupied" / "report").string();
  EXPECT_EQ(run_code(o), ExitCode::kRuntime);
  o.output = (dir.path() / "occupied").string();
  EXPECT_EQ(run_code(o), ExitCode::kRuntime);
}

}  // namespace
}  // namespace collbench::report
