// WebConsoleLogger: Logger → console (see web_console_logger.hpp).
#include "mcprt/web/web_console_logger.hpp"

#include <emscripten/emscripten.h>

#include <string>

#include "mcprt/redact.hpp"

EM_JS(void, mcprt_js_console_log, (int level, const char* text, int size), {
  var message = "[mcprt] " + UTF8ToString(text, size);
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
  mcprt_js_console_log(static_cast<int>(level), masked.data(), static_cast<int>(masked.size()));
}

}  // namespace mcprt::web
