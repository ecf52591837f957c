#pragma once
// The scripted stdio MCP server: the test binary re-runs itself with
// `--scripted-server=<scenario> [args...]` (tests/native/main.cpp) and then behaves as one
// of these servers instead of running tests.
//
// Scenarios (MCP ones answer initialize, tools/list with 2 tools — echo and add —,
// tools/call, ping; unknown requests get -32601):
//   ok                  a minimal correct MCP server; exits 0 on stdin EOF
//   crash_at_start      writes a line to stderr and exits 3 before reading anything
//   hang_initialize     reads requests, never answers; exits 0 on stdin EOF
//   garbage_lines       non-JSON lines on stdout before every answer
//   huge_line           on initialize, a line of MCPRT_SCRIPTED_HUGE_BYTES (default 100 MB)
//                       'x' bytes and a newline, then the answer
//   flood_stderr        MCPRT_SCRIPTED_FLOOD_BYTES (default 8 MiB) of stderr lines at
//                       start and 1 MiB more before every answer
//   exit_mid_call       exits 7 when tools/call arrives
//   hang_call           like ok, but never answers tools/call
//   ignore_stdin_close  ignores stdin EOF (stays up until signalled)
//   ignore_sigterm      ignores stdin EOF and SIGTERM (only SIGKILL ends it); writes
//                       "ready: ignoring SIGTERM" to stderr once SIGTERM is ignored
//   late_tool           like ok, but right after answering the first tools/list it adds a
//                       third tool, `late`, and sends notifications/tools/list_changed (in
//                       the same write as that answer); later lists have the three tools
//   slow_initialize     like ok, but answers initialize only after <arg1> ms (default
//                       1000): a slow-starting server for the startup gate
// Hostile MCP scenarios (SPEC §17 "Bounded input"); the depth is MCPRT_SCRIPTED_DEPTH
// (default 66000 levels of nested arrays, a ~130 KB line):
//   deep_tools_list     answers tools/list with {"tools":[[[...]]]} nested that deep
//   deep_call_result    answers tools/call with {"content":[[[...]]]} nested that deep
//   deep_notification   before every answer, a notifications/message whose params.data
//                       is nested that deep; otherwise like ok
//   invalid_utf8_tools_list  answers tools/list with a byte 0xFF inside a tool's
//                       description (nothing else wrong)
// Byte-level scenarios (no MCP):
//   slow_cat            echoes stdin to stdout in small pieces, pausing between them
//   stderr_tail         writes 200 KiB of numbered stderr lines, then "LAST LINE", exits 1
//   burst_then_exit     writes <arg1> bytes (default 262144) of a pattern to stdout, exits 0
//   grandchild_exit     forks a grandchild that keeps stdout open and sleeps, prints
//                       "grandchild <pid>" on stdout, exits 5
//   stdout_close        closes stdout, writes "pid <pid>" to stderr, sleeps
//   print_env           prints one JSON line {cwd, pid, pgid, env:{<each arg>: value|null}}
//                       and exits 0

namespace mcprt::native::test {

// Runs the scenario; returns the exit code. Never returns for scenarios that only end by
// signal.
int run_scripted_server(const char* scenario, int argc, char** argv);

}  // namespace mcprt::native::test
