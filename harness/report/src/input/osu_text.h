// OSU Micro-Benchmarks' printed output: per run a banner ("# OSU MPI Allreduce Latency Test
// v7.4"), a "# Datatype: MPI_CHAR." line (7.x), and a table per datatype whose header names its
// columns ("# Size  Avg Latency(us)  Min Latency(us) ..."; "Bandwidth (MB/s)" for bw and bibw).
// OSU prints one test per run; a log may hold several runs with anything else between them.
#pragma once

#include <memory>
#include <string_view>

#include "input/import_sink.h"

namespace collbench::report::detail {

/// Whether `line` (launcher prefix stripped) is an OSU banner: "# OSU <library> <name> Test vX".
bool is_osu_banner(std::string_view line);

/// The reader of one file of OSU's printed output.
std::unique_ptr<Importer> make_osu_text_importer(ImportSink sink);

}  // namespace collbench::report::detail
