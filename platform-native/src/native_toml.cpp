// toml++ → nlohmann::json for Codex's config.toml (DiscoveryContext::parse_toml). The only
// file that includes toml++ (its headers are heavy). toml++ reports errors by exception;
// they are caught here, so nothing crosses into the core.

#include <cmath>
#include <sstream>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "mcprt/native/discovery.hpp"

namespace mcprt::native {

namespace {

template <class T>
std::string as_text(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

json to_json(const toml::node& node) {
  if (const auto* t = node.as_table()) {
    json out = json::object();
    for (const auto& [key, value] : *t) out[std::string(key.str())] = to_json(value);
    return out;
  }
  if (const auto* a = node.as_array()) {
    json out = json::array();
    for (const auto& value : *a) out.push_back(to_json(value));
    return out;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) {
    const double d = f->get();
    return std::isfinite(d) ? json(d) : json(nullptr);
  }
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* d = node.as_date()) return as_text(d->get());
  if (const auto* t = node.as_time()) return as_text(t->get());
  if (const auto* dt = node.as_date_time()) return as_text(dt->get());
  return nullptr;
}

}  // namespace

Result<json> parse_toml(std::string_view text, std::string_view path) {
  try {
    toml::table table = toml::parse(text, path);
    return to_json(table);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return Error::make(ErrorCode::invalid_config, std::string(e.description()),
                       json{{"line", static_cast<int>(where.line)}, {"column", static_cast<int>(where.column)}});
  } catch (const std::exception& e) {
    return Error::make(ErrorCode::invalid_config, e.what());
  }
}

}  // namespace mcprt::native
