// nccl-tests' printed output: the banner of each run ("# nThread 1 nGpus 8 minBytes ...", since
// 2.17 after "# nccl-tests version ..." and "# Collective test starting: all_reduce_perf"), the
// "# Using devices" rank lines, and the table, whose columns changed over the years (no redop or
// root column in old versions, "error" instead of "#wrong", per-iteration and timestamp columns
// in new ones). A log may hold several runs with anything else between their lines.
#pragma once

#include <memory>
#include <string_view>

#include "input/import_sink.h"

namespace collbench::report::detail {

/// Whether `line` (launcher prefix stripped) opens an nccl-tests run: its "# nThread N nGpus M"
/// line or its "# nccl-tests version" line.
bool is_nccl_tests_banner(std::string_view line);

/// Whether `line` is the column header of an nccl-tests table: size, count and type, then time,
/// algbw and busbw, and no column nccl-tests does not print (collbench's own console table,
/// which keeps nccl-tests' columns first, has more).
bool is_nccl_tests_header(std::string_view line);

/// Whether `line` is a row of an nccl-tests table whose words fit exactly one of the layouts
/// nccl-tests has printed (so that it can be read without its header).
bool is_nccl_tests_headerless_row(std::string_view line);

/// Whether `line` is the footer of an nccl-tests table: "# Out of bounds values : 0 OK" or
/// "# Avg bus bandwidth : ...".
bool is_nccl_tests_footer(std::string_view line);

/// The reader of one file of nccl-tests' printed output, called `file_name`.
std::unique_ptr<Importer> make_nccl_tests_text_importer(ImportSink sink,
                                                        std::string_view file_name);

}  // namespace collbench::report::detail
