// What strata was doing, for the crash handler (docs/cli.md, "Exit codes"): the pass manager,
// the program builder and the executor record the pass, the op being lowered or the step being
// run; `strata` prints it if the process dies on a signal. One process-wide record, written by
// whichever thread did last (a crash names the latest activity, not necessarily its own); reading
// it is async-signal-safe.
#pragma once
#include <string_view>

namespace strata {

// Records "<what>" (truncated to a few hundred bytes); cheap enough for every kernel call.
void setCrashContext(std::string_view what);
// The last record, NUL-terminated ("" before any).
const char *crashContext();

} // namespace strata
