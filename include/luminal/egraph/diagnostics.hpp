#pragma once
// Environment switches of the e-graph layer (SPEC section 11):
//   LUMINAL_LOG_EGRAPH=1 (or LUMINAL_LOG=1)  per-rule statistics per phase on stderr
//   LUMINAL_DUMP_DIR=<dir>                   DOT dumps of the HLIR and the e-graph
// Both are read on every call (cheap), so tests can set them with setenv().

#include <optional>
#include <string>
#include <string_view>

namespace luminal::egraph {

/// True if LUMINAL_LOG_EGRAPH or LUMINAL_LOG is set to something other than "" or "0".
bool log_egraph_enabled();
/// The dump directory, if LUMINAL_DUMP_DIR is set and not empty.
std::optional<std::string> dump_dir();
/// Write `text` to `<dump dir>/<NNN>-<stem>.<ext>` (NNN: a per-process
/// sequence number, so successive dumps do not overwrite each other). Returns
/// the path written, or nullopt when dumping is off. Never throws: a dump that
/// cannot be written is reported on stderr.
std::optional<std::string> write_dump(std::string_view stem, std::string_view ext,
                                      const std::string& text);

}  // namespace luminal::egraph
