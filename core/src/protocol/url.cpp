#include "mcprt/url.hpp"

#include <cctype>
#include <vector>

namespace mcprt {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_scheme_char(char c, bool first) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isalpha(u)) return true;
  return !first && (std::isdigit(u) || c == '+' || c == '-' || c == '.');
}

// The scheme of `s` ("http" for "http://x"), or "" when `s` has none (RFC 3986 §3.1).
std::string_view scheme_of(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  for (std::size_t i = 0; i < colon; ++i) {
    if (!is_scheme_char(s[i], i == 0)) return {};
  }
  return s.substr(0, colon);
}

// RFC 3986 §5.2.4 "remove_dot_segments" over an absolute path.
std::string remove_dot_segments(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  bool trailing_slash = false;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    const std::string_view seg = path.substr(pos, next - pos);
    const bool last = next == path.size();
    if (pos == 0 && seg.empty()) {
      // The leading '/' of an absolute path.
    } else if (seg == ".") {
      trailing_slash = last;
    } else if (seg == "..") {
      if (!out.empty()) out.pop_back();
      trailing_slash = last;
    } else {
      out.push_back(seg);
      trailing_slash = false;
    }
    pos = next + 1;
  }
  std::string result;
  for (std::string_view seg : out) {
    result.push_back('/');
    result.append(seg);
  }
  if (trailing_slash || result.empty()) result.push_back('/');
  return result;
}

}  // namespace

std::string Url::origin() const {
  std::string out = scheme + "://" + host;
  const int default_port = scheme == "https" ? 443 : 80;
  if (port != default_port) out += ":" + std::to_string(port);
  return out;
}

std::string Url::to_string() const {
  std::string out = scheme + "://";
  if (!userinfo.empty()) out += userinfo + "@";
  out += host;
  if (explicit_port) out += ":" + std::to_string(port);
  out += path;
  if (has_query) out += "?" + query;
  return out;
}

std::optional<Url> parse_http_url(std::string_view text) {
  const std::string_view scheme = scheme_of(text);
  if (scheme.empty()) return std::nullopt;
  Url url;
  url.scheme = lower(scheme);
  if (url.scheme != "http" && url.scheme != "https") return std::nullopt;
  std::string_view rest = text.substr(scheme.size() + 1);
  if (rest.substr(0, 2) != "//") return std::nullopt;
  rest.remove_prefix(2);

  if (const std::size_t hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  std::size_t auth_end = rest.find_first_of("/?");
  if (auth_end == std::string_view::npos) auth_end = rest.size();
  std::string_view authority = rest.substr(0, auth_end);
  std::string_view path_and_query = rest.substr(auth_end);

  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    url.userinfo = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port = after.substr(1);
      url.explicit_port = true;
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    url.explicit_port = true;
  }
  if (host.empty() || host == "[]") return std::nullopt;
  for (char c : host) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || c == '/' || c == '\\' || c == '?' || c == '#' || c == '@') return std::nullopt;
  }
  url.host = lower(host);

  url.port = url.scheme == "https" ? 443 : 80;
  if (url.explicit_port) {
    if (port.empty()) {
      url.explicit_port = false;  // "http://x:/" means the default port
    } else {
      if (port.size() > 5) return std::nullopt;
      int n = 0;
      for (char c : port) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
      }
      if (n < 1 || n > 65535) return std::nullopt;
      url.port = n;
    }
  }

  std::string_view path = path_and_query;
  if (const std::size_t q = path_and_query.find('?'); q != std::string_view::npos) {
    path = path_and_query.substr(0, q);
    url.query = std::string(path_and_query.substr(q + 1));
    url.has_query = true;
  }
  for (char c : path_and_query) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == ' ') return std::nullopt;  // would break the request line
  }
  url.path = path.empty() ? std::string("/") : remove_dot_segments(path);
  return url;
}

std::optional<std::string> resolve_url(std::string_view base_text, std::string_view ref) {
  const std::optional<Url> base = parse_http_url(base_text);
  if (!base) return std::nullopt;
  if (const std::size_t hash = ref.find('#'); hash != std::string_view::npos) {
    ref = ref.substr(0, hash);
  }
  auto finish = [](const std::string& candidate) -> std::optional<std::string> {
    auto parsed = parse_http_url(candidate);
    if (!parsed) return std::nullopt;
    return parsed->to_string();
  };

  if (!scheme_of(ref).empty()) return finish(std::string(ref));
  if (ref.substr(0, 2) == "//") return finish(base->scheme + ":" + std::string(ref));

  Url out = *base;
  if (ref.empty()) return out.to_string();
  if (ref.front() == '?') {
    out.query = std::string(ref.substr(1));
    out.has_query = true;
    return out.to_string();
  }
  std::string_view ref_path = ref;
  std::string_view ref_query;
  bool has_query = false;
  if (const std::size_t q = ref.find('?'); q != std::string_view::npos) {
    ref_path = ref.substr(0, q);
    ref_query = ref.substr(q + 1);
    has_query = true;
  }
  std::string merged;
  if (ref_path.front() == '/') {
    merged = std::string(ref_path);
  } else {
    // Merge with the base path's directory (RFC 3986 §5.2.3).
    const std::size_t slash = base->path.rfind('/');
    merged = base->path.substr(0, slash + 1) + std::string(ref_path);
  }
  std::string candidate = base->origin() + remove_dot_segments(merged);
  if (has_query) candidate += "?" + std::string(ref_query);
  // origin() leaves the base's userinfo behind: credentials embedded in a URL are not
  // carried over to the paths a server points us to.
  return finish(candidate);
}

bool same_origin(std::string_view a, std::string_view b) {
  const std::optional<Url> ua = parse_http_url(a);
  const std::optional<Url> ub = parse_http_url(b);
  return ua && ub && ua->scheme == ub->scheme && ua->host == ub->host && ua->port == ub->port;
}

}  // namespace mcprt
