// NCCL's debug log as NCCL 2.28 writes it: NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE read
// once, at the first line; "host:pid:tid [dev] NCCL INFO ..." lines; WARN lines after a blank
// line and a timestamp; the version banner bare at the VERSION and WARN levels. collbench parses
// this log (its capture, nccl_log.cpp, nccl_tuning.cpp, nccl_settings.cpp), so the formats are
// NCCL's own (src/debug.cc and the INFO calls it is fed by), not the stand-in's invention.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <string>
#include <string_view>

namespace collbench::stand_in::nccl_log {

// NCCL's subsystem bits (ncclDebugLogSubSys).
inline constexpr std::uint64_t kInit = 0x1;
inline constexpr std::uint64_t kColl = 0x2;
inline constexpr std::uint64_t kP2p = 0x4;
inline constexpr std::uint64_t kNet = 0x10;
inline constexpr std::uint64_t kGraph = 0x20;
inline constexpr std::uint64_t kTuning = 0x40;
inline constexpr std::uint64_t kEnv = 0x80;
inline constexpr std::uint64_t kAlloc = 0x100;
inline constexpr std::uint64_t kBootstrap = 0x1000;
inline constexpr std::uint64_t kReg = 0x2000;
inline constexpr std::uint64_t kProfile = 0x4000;
inline constexpr std::uint64_t kAll = ~std::uint64_t{0};

// NCCL's levels (ncclDebugLogLevel).
inline constexpr int kNone = 0;
inline constexpr int kVersion = 1;
inline constexpr int kWarn = 2;
inline constexpr int kInfo = 3;
inline constexpr int kTrace = 5;

/// The level NCCL_DEBUG set, reading the settings if no line has yet.
int level();
/// Whether an INFO line of `flags` would be written (to skip building it otherwise).
bool enabled(std::uint64_t flags);

void info(std::uint64_t flags, std::string_view message);
/// A WARN line; its message also becomes ncclGetLastError's text. `where` is NCCL's
/// "file.cc:line" part.
void warn(std::string_view where, std::string_view message);
/// NCCL's showVersion: the banner as INFO, or bare at the VERSION and WARN levels.
void version_banner();

/// ncclGetLastError's text: the message of the last WARN.
const char* last_error();

/// NCCL's ncclDebugLogger_t, handed to plugins.
void plugin_logger(int level, unsigned long flags, const char* file, int line, const char* format,
                   ...);

/// "NCCL version 2.28.9+cuda13.0".
std::string version_string();

}  // namespace collbench::stand_in::nccl_log
