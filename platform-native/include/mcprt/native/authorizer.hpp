#pragma once
// LoopbackAuthorizer: the native Authorizer seam (SPEC §13 "The user step",
// mcprt/platform/authorizer.hpp): the OAuth redirect comes back to a listener on
// 127.0.0.1, the browser is opened for the user and the URL is always shown as well.
//
//   mcprt::native::LoopbackAuthorizer authorizer(executor, {.on_prompt = print_sign_in_hint});
//   auto flow = authorizer.begin({.server_name = "github"});   // binds 127.0.0.1:<ephemeral>
//   // ... register the client with (*flow)->redirect_uri() ...
//   (*flow)->authorize(authorization_url, [](Result<std::string> redirect) { ... });
//
// Implements:
//  [x] begin(): one listener per flow on 127.0.0.1, an ephemeral port or
//      options.callback_port (a taken port is an error naming it); redirect_uri() is
//      http://127.0.0.1:<port>/callback. The listener closes when the flow completes,
//      times out or is destroyed
//  [x] GET /callback completes the flow with the full redirect URL
//      (http://127.0.0.1:<port>/callback?code=...&state=...); the browser gets a small page
//      saying it can close the tab. Everything else is 404. Only the loopback request for
//      this sign-in completes it: the Host header must be 127.0.0.1:<port> (a DNS-rebinding
//      page cannot), and when the authorization URL carries `state`, the callback must
//      carry the same one (another page or process that finds the port gets a 400 and the
//      flow keeps waiting). A callback before authorize() is refused the same way. The core
//      still checks code, state and iss itself
//  [x] authorize(): the URL must be an absolute http(s) URL; it is shown in its serialized
//      form (percent-encoded: no spaces or terminal control bytes). The browser: each
//      command of $BROWSER (':'-separated, each split into words like a shell would, with
//      quotes and backslashes, but never run by one), "%s" replaced by the URL or the URL
//      appended, tried in order until one starts; without $BROWSER, `fallback_browser`
//      (xdg-open) when a display is there ($DISPLAY or $WAYLAND_DISPLAY). The command is
//      started detached (double fork, new session, stdio on /dev/null, no other descriptor
//      of this process): it is never waited for and never left as this process's child. Then
//      on_prompt runs, always, with the URL and whether a browser was started, so a headless
//      machine still signs in
//  [x] timeout: options.timeout after authorize() the flow completes with
//      ErrorCode::timeout and the listener closes
//  [ ] no console browsers: a $BROWSER like w3m does not get the terminal (stdio is
//      /dev/null); use the printed URL instead
//  [ ] no IPv6 listener (::1): redirect URIs name 127.0.0.1, which RFC 8252 §7.3 prefers
//
// Threading: begin(), authorize() and the flow's destructor belong to the executor's
// thread; `done` runs there (later, never inside authorize()), on_prompt inside authorize(). Each
// flow runs its listener on a thread of its own, which only hands the redirect to the executor
// (Executor::post from that thread, so the executor must accept posts from other threads, as
// NativeExecutor does). Destroying the flow stops and joins that thread; no callback runs
// afterwards. The authorizer may be destroyed before its flows; the executor must outlive them.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/platform/authorizer.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::native {

// What the host shows the user when a flow's authorization URL is ready.
struct AuthorizePrompt {
  std::string server_name;
  std::string authorization_url;  // serialized; still text from a server: print it, never run it
  std::string redirect_uri;
  bool browser_started = false;  // a browser command was started
  std::string browser_command;   // the program started (or the last one tried)
  std::string browser_error;     // why none was started; empty when one was
};

struct LoopbackAuthorizerOptions {
  // Shows the URL (the CLI decides the text): called inside authorize(), once, after the
  // browser was started or not, so it runs before the flow can complete. It must not
  // destroy the flow. Null = two plain lines on stderr.
  std::function<void(const AuthorizePrompt&)> on_prompt;
  // false: never start a browser, only show the URL (`--no-browser`, headless hosts).
  bool open_browser = true;
  // $BROWSER, $DISPLAY, $WAYLAND_DISPLAY and $PATH lookups; null = the process environment.
  EnvLookup env;
  // Used without $BROWSER when a display is there. Empty = none.
  std::string fallback_browser = "xdg-open";
  // A connection to the listener that sends no complete request head in this time is closed.
  Millis request_timeout{10000};
};

class LoopbackAuthorizer final : public Authorizer {
 public:
  explicit LoopbackAuthorizer(Executor& executor, LoopbackAuthorizerOptions options = {});

  Result<std::unique_ptr<AuthorizeFlow>> begin(const AuthorizeFlowOptions& options) override;

 private:
  Executor& executor_;
  std::shared_ptr<const LoopbackAuthorizerOptions> options_;
};

// The commands $BROWSER names for `url`, in order: the value split at ':', each part split
// into words (whitespace separates; '…' keeps everything literally; "…" keeps everything
// but \" \\ \$ \`; a backslash outside quotes keeps the next byte), every "%s" in a word
// replaced by `url`, else `url` appended as its own word. Parts that are empty or have an
// unterminated quote are left out. Pure; exposed for tests.
std::vector<std::vector<std::string>> browser_commands(std::string_view browser_env,
                                                       const std::string& url);

// Starts `argv` (argv[0] looked up in $PATH before forking) detached, the way the
// authorizer starts a browser: a double fork, a session of its own, stdio on /dev/null, no
// descriptor of this process but a status pipe that closes on exec. Returns 0 once the
// program was executed, else the errno that stopped it (ENOENT: not found in $PATH).
int start_detached(const std::vector<std::string>& argv);

}  // namespace mcprt::native
