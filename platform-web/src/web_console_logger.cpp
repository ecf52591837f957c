// WebConsoleLogger: Logger → console (see web_console_logger.hpp).
#include "mcprt/web/web_console_logger.hpp"

#include <emscripten/emscripten.h>

#include <string>

#include "mcprt/redact.hpp"

// A runtime's lines go to Module.mcprtLog (js/index.js: its `log` option or the console);
// a logger without a host id (the seams test module) writes to the console itself.
EM_JS(void, mcprt_js_console_log, (int host, int level, const char* text, int size), {
  var message = UTF8ToString(text, size);
  var sink = Module["mcprtLog"];
  if (host && sink) {
    sink(host, level, message);
    return;
  }
  message = "[mcprt] " + message;
  if (level == 0) console.debug(message);
  else if (level == 1) console.info(message);
  else if (level == 2) console.warn(message);
  else console.error(message);
});

namespace mcprt::web {

void WebConsoleLogger::log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < static_cast<int>(min_level_)) return;
  // Every line is masked here (SPEC §17): URL userinfo, secret query values, bearer tokens.
  const std::string masked = redact_secrets(message);
  mcprt_js_console_log(host_id_, static_cast<int>(level), masked.data(),
                       static_cast<int>(masked.size()));
}

}  // namespace mcprt::web
