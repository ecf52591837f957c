// The Streamable HTTP and legacy SSE state machines (and the automatic fallback between
// them): make_http_transport over FakeHttpClient under a ClientSession that connects,
// lists tools and calls one while another call runs. The input answers each HTTP request
// the transport makes, in order: status, headers, and a body split at input-chosen points.
//
// Input: records separated by "\n----\n". The first record is the setup, one word a line:
//   streamable | sse | auto   the transport mode (default: auto)
//   https                     the configured URL is https (default http)
//   origin-locked             headerPolicy: "origin-locked"
//   no-get                    no standalone GET stream
// Each further record answers the next request:
//   <status> [chunk sizes, comma-separated, cycled; 0 = whole] [cut | open]
//   Header-Name: value        (any number; "X-Final-Url: <url>" sets the head's final URL)
//   <empty line>
//   <body>                    "$ID" becomes the JSON-RPC id of the request being answered
// Status words instead of a number: `refuse` (connection refused), `timeout`, `hang`
// (never answered). `cut` ends the body with a transport error instead of completing;
// `open` leaves it open after the body (a stream that stays up, e.g. the legacy SSE GET
// that carries every answer). A record that starts with
//   push [chunk sizes] [end | cut]
// answers no request: its body goes on down the last `open` response as soon as it is the
// next record (the answers a legacy SSE stream carries later, a request the server sends
// on the GET stream), which `end` then completes and `cut` breaks; with no open response
// it is dropped. Requests beyond the
// records hang; deadlines and the final close end them. With FUZZ_TRACE set in the environment, every request and the record
// that answers it are printed to stderr (for writing seeds).
//
// Invariants: every callback fires exactly once and on_close once; a request never
// carries the configured secret headers, the bearer token, Mcp-Session-Id or
// MCP-Protocol-Version to another origin than the configured URL's (SPEC §17); with an
// https URL nothing is ever sent over http; every POST body is JSON-RPC.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/url.hpp"

namespace {

using mcprt::json;
using mcprt::fuzz::as_text;

constexpr std::string_view kSecretHeader = "X-Api-Key";
constexpr std::string_view kSecretValue = "fuzz-secret-key";

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::size_t> chunk_sizes(std::string_view list) {
  std::vector<std::size_t> out;
  std::size_t v = 0;
  bool have = false;
  for (char c : list) {
    if (c >= '0' && c <= '9') {
      v = std::min<std::size_t>(v * 10 + static_cast<std::size_t>(c - '0'), 1u << 20);
      have = true;
    } else if (c == ',') {
      if (have) out.push_back(v);
      v = 0;
      have = false;
    }
  }
  if (have) out.push_back(v);
  return out;
}

std::string replace_id(std::string_view body, const std::string& id) {
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body.compare(i, 3, "$ID") == 0) {
      out += id;
      i += 2;
    } else {
      out += body[i];
    }
  }
  return out;
}

// The body split at the record's chunk sizes.
void send_chunks(const mcprt::testing::FakeHttpExchange& ex, std::string_view body, std::string_view params) {
  std::vector<std::size_t> sizes = chunk_sizes(params);
  if (sizes.empty()) sizes.push_back(0);
  std::size_t pos = 0, k = 0;
  while (pos < body.size()) {
    std::size_t n = sizes[k++ % sizes.size()];
    if (n == 0) n = body.size();
    ex.chunk(body.substr(pos, n));
    pos += n;
  }
}

std::string first_word(std::string_view record, std::string_view* params = nullptr) {
  std::string_view rest = record;
  const std::string_view line = mcprt::fuzz::take_line(rest);
  const std::size_t sp = line.find(' ');
  if (params) *params = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
  return trim(line.substr(0, sp));
}

// Answers `ex` with `record`; returns whether the response stays open.
bool answer(const mcprt::testing::FakeHttpExchange& ex, std::string_view record) {
  std::string_view rest = record;
  (void)mcprt::fuzz::take_line(rest);
  std::string_view params;
  const std::string first = first_word(record, &params);
  if (first == "hang") return false;
  if (first == "refuse") {
    ex.fail(mcprt::Error::make(mcprt::ErrorCode::transport, "connection refused"));
    return false;
  }
  if (first == "timeout") {
    ex.fail(mcprt::Error::make(mcprt::ErrorCode::timeout, "timed out"));
    return false;
  }
  int status = 0;
  for (char c : first) {
    if (c < '0' || c > '9' || status > 999) break;
    status = status * 10 + (c - '0');
  }
  if (status < 100) status = 200;

  mcprt::HttpHeaders headers;
  std::string final_url;
  while (!rest.empty()) {
    std::string_view line = mcprt::fuzz::take_line(rest);
    if (trim(line).empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = trim(line.substr(0, colon));
    std::string value = trim(line.substr(colon + 1));
    if (mcprt::iequals(name, "X-Final-Url")) {
      final_url = value;
    } else {
      headers.add(std::move(name), std::move(value));
    }
  }
  json body_json = ex.json_body();
  const std::string id = body_json.is_object() && body_json.contains("id") ? body_json.at("id").dump() : "null";
  const std::string body = replace_id(rest, id);

  ex.head(status, std::move(headers), std::move(final_url));
  send_chunks(ex, body, params);
  if (params.find("open") != std::string_view::npos) return true;
  if (params.find("cut") != std::string_view::npos) {
    ex.fail(mcprt::Error::make(mcprt::ErrorCode::transport, "connection reset"));
  } else {
    ex.complete();
  }
  return false;
}

// A `push` record: more of the open response's body.
void push(const mcprt::testing::FakeHttpExchange& ex, std::string_view record) {
  std::string_view body = record;
  (void)mcprt::fuzz::take_line(body);
  std::string_view params;
  (void)first_word(record, &params);
  send_chunks(ex, body, params);
  if (params.find("cut") != std::string_view::npos) {
    ex.fail(mcprt::Error::make(mcprt::ErrorCode::transport, "connection reset"));
  } else if (params.find("end") != std::string_view::npos) {
    ex.complete();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::vector<std::string_view> records = mcprt::fuzz::split_records(as_text(bytes, size), 40);
  const std::string_view setup = records.front();
  auto has_word = [&](std::string_view w) {
    std::string_view rest = setup;
    while (!rest.empty()) {
      if (trim(mcprt::fuzz::take_line(rest)) == w) return true;
    }
    return false;
  };

  mcprt::testing::ManualExecutor ex;
  mcprt::testing::CapturingLogger log;
  mcprt::testing::FakeHttpClient http(ex);
  const bool https = has_word("https");
  mcprt::HttpTransportOptions o;
  o.mode = has_word("streamable") ? mcprt::HttpTransportMode::streamable
           : has_word("sse")      ? mcprt::HttpTransportMode::sse
                                  : mcprt::HttpTransportMode::automatic;
  const std::string origin = https ? "https://mcp.example.test" : "http://127.0.0.1:8931";
  o.url = origin + (o.mode == mcprt::HttpTransportMode::sse ? "/sse" : "/mcp");
  o.headers.add(std::string(kSecretHeader), std::string(kSecretValue));
  o.headers.add("Authorization", "Bearer fuzz-token");
  o.server_name = "fuzz";
  o.origin_locked = has_word("origin-locked");
  o.open_get_stream = !has_word("no-get");
  o.logger = &log;
  o.max_message_bytes = 1u << 16;
  o.default_retry_ms = 100;
  o.max_retry_ms = 2000;
  auto transport = mcprt::make_http_transport(ex, http, o);
  FUZZ_CHECK(transport.ok());

  mcprt::ClientOptions copts;
  copts.server_name = "fuzz";
  copts.logger = &log;
  copts.connect_timeout = mcprt::Millis(20000);
  copts.request_timeout = mcprt::Millis(20000);
  copts.max_list_pages = 4;
  copts.on_notification = [](const std::string&, const json&) {};
  int closes = 0;
  copts.on_close = [&](const mcprt::Error& e) {
    ++closes;
    (void)e.describe();
  };
  auto session = mcprt::ClientSession::create(ex, std::move(transport).value(), std::move(copts));

  int connects = 0, lists = 0, calls = 0, calls_started = 0;
  auto call = [&](const std::string& tool) {
    ++calls_started;
    mcprt::CallOptions opts;
    opts.timeout = mcprt::Millis(15000);
    opts.on_progress = [](const json&) {};
    session->call_tool(tool, json{{"message", "hi"}}, std::move(opts), [&](mcprt::Result<json> r) {
      ++calls;
      if (!r.ok()) (void)r.error().describe();
    });
  };
  session->connect([&](mcprt::Status s) {
    ++connects;
    if (!s.ok()) return;
    call("echo");
    session->list_tools([&](mcprt::Result<std::vector<json>> listed) {
      ++lists;
      if (listed.ok() && !listed->empty()) call(listed->front().at("name").get<std::string>());
    });
  });

  const auto configured = mcprt::parse_http_url(o.url);
  FUZZ_CHECK(configured.has_value());
  std::size_t next = 1;
  std::optional<mcprt::testing::FakeHttpExchange> open_response;
  static const bool trace = std::getenv("FUZZ_TRACE") != nullptr;
  auto serve = [&]() {
    bool any = false;
    for (int round = 0; round < 64; ++round) {
      ex.run_until_idle();
      auto req = http.take();
      if (!req) {
        // Nothing waits: the server may go on talking down its open stream.
        if (next >= records.size() || first_word(records[next]) != "push") break;
        if (open_response && !open_response->finished()) push(*open_response, records[next]);
        ++next;
        any = true;
        continue;
      }
      any = true;
      const mcprt::HttpRequest& r = req->request();
      if (!mcprt::same_origin(r.url, o.url)) {
        FUZZ_CHECK(!r.headers.has(kSecretHeader));
        FUZZ_CHECK(!r.headers.has("Authorization"));
        FUZZ_CHECK(!r.headers.has("Mcp-Session-Id"));
        FUZZ_CHECK(!r.headers.has("MCP-Protocol-Version"));
      }
      if (https) FUZZ_CHECK(r.url.rfind("https://", 0) == 0);
      if (r.method == "POST") {
        json body = req->json_body();
        FUZZ_CHECK(!body.is_discarded());
        FUZZ_CHECK(body.is_object() || body.is_array());
      }
      if (trace) {
        std::fprintf(stderr, "request %zu: %s %s %s\n", next, r.method.c_str(), r.url.c_str(),
                     r.body.substr(0, 120).c_str());
      }
      while (next < records.size() && first_word(records[next]) == "push") {
        if (open_response && !open_response->finished()) push(*open_response, records[next]);
        ++next;
      }
      if (next < records.size() && answer(*req, records[next++])) open_response = req;
    }
    ex.run_until_idle();
    return any;
  };

  for (int i = 0; i < 64; ++i) {
    if (serve()) continue;
    if (!ex.advance_to_next_timer()) break;
  }
  session->close();
  for (int i = 0; i < 16; ++i) {
    if (serve()) continue;
    if (!ex.advance_to_next_timer()) break;
  }

  FUZZ_CHECK(connects == 1);
  FUZZ_CHECK(lists <= 1);
  FUZZ_CHECK(calls == calls_started);
  FUZZ_CHECK(closes == 1);
  return 0;
}
