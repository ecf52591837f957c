#pragma once
// The CLI's elicitation handler (SPEC §15 "Host input handlers"), internal to
// platform-native/cli: what `mcprt` answers when a server asks the user for input
// (2025 `elicitation/create`, 2026 MRTR input requests).
//
//   ElicitPolicy::ask (the default, `--elicit=ask`):
//     on a terminal (stdin and stderr are TTYs) a form on stderr/stdin: which server asks
//     and its message, then one prompt per property of the requested schema (title,
//     description, type, the default — used on empty input —, enum choices, y/n for
//     booleans, integers and numbers checked and asked again, at most kMaxAttempts times),
//     then accept / decline / cancel; Ctrl-D at any prompt cancels. URL mode shows the
//     server and the full URL and asks for consent; on "yes" the page is opened with
//     xdg-open when a display is there ($DISPLAY or $WAYLAND_DISPLAY), else only printed,
//     and the answer is accept (no = decline).
//     Not a terminal: decline, with one stderr line saying why and how to allow it.
//   ElicitPolicy::decline (`--elicit=decline`): every request is declined, silently.
//   ElicitPolicy::accept_defaults (`--elicit=accept-defaults`, for tests and scripts): a
//     form is accepted with no values of its own, so the core fills in the schema's
//     defaults; URL mode is declined.
//
// Every text from the server (message, titles, descriptions, choices, defaults, the URL)
// is shown without control characters, escape sequences or bidirectional overrides: a
// server cannot move the cursor, recolour or rewrite what the user reads.
//
// The form runs inside the handler, on the executor's thread, and answers before it
// returns: nothing else of the CLI reads the terminal meanwhile (the REPL's reader is the
// same thread), and one request's questions never interleave with another's.
//
// No sampling handler: the CLI has no model, so sampling is not declared.

#include <optional>
#include <string>
#include <string_view>

#include "mcprt/input.hpp"

namespace mcprt::cli {

enum class ElicitPolicy { ask, decline, accept_defaults };

// "ask" | "decline" | "accept-defaults"; nullopt for anything else.
std::optional<ElicitPolicy> parse_elicit_policy(std::string_view text);

// The handlers `mcprt` installs (ManagerOptions::input): elicitation (form and URL mode)
// by `policy`; `sample` stays unset.
InputHandlers cli_input_handlers(ElicitPolicy policy);

// `text` as it may reach the terminal: C0 and C1 controls, DEL, bidirectional controls
// and invalid UTF-8 removed (a line break becomes "\n" + `indent`, a tab a space), at most
// `max_bytes` bytes kept ("..." marks the cut).
std::string terminal_safe(std::string_view text, std::size_t max_bytes,
                          std::string_view indent = "  ");

// Whether the user can be asked: stdin and stderr are terminals.
bool can_prompt();

}  // namespace mcprt::cli
