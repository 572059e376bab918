// The JSON document nccl-tests writes with -J FILE (util.cu's writer, versions 1 and 2 of its
// "version" member): the command line ("args"), the NCCL version, the run's "config" with one
// "devices" entry per process, and "results", one object per size with its "out_of_place" and
// "in_place" times and bandwidths. The writer closes the document only when the run ends; a
// document cut short is read up to its last complete value.
#pragma once

#include <memory>
#include <string_view>

#include "input/import_sink.h"

namespace collbench::report::detail {

/// Whether a file beginning with `head` is an nccl-tests -J document: a JSON object whose first
/// member is "version", with a "start_time" member.
bool is_nccl_tests_json(std::string_view head);

/// The reader of one nccl-tests -J document, called `file_name`.
std::unique_ptr<Importer> make_nccl_tests_json_importer(ImportSink sink,
                                                        std::string_view file_name);

}  // namespace collbench::report::detail
