// What strata was doing, for the crash handler (docs/cli.md, "Exit codes"): the pass manager,
// the program builder and the executor record the pass, the op being lowered or the step being
// run; `strata` prints it if the process dies on a signal. Each thread keeps its own record (so
// concurrent runs never race on it); a crash names the crashing thread's activity, or, on a
// thread that recorded none (a pool worker), the latest any thread recorded. Reading it is
// async-signal-safe.
#pragma once
#include <string_view>

namespace strata {

// Records "<what>" (truncated to a few hundred bytes); cheap enough for every kernel call.
void setCrashContext(std::string_view what);
// This thread's record, else the latest of any thread; NUL-terminated ("" before any).
const char *crashContext();

} // namespace strata
