// JSON-RPC classification and dispatch. The input is what a stdio server writes (after
// one control byte): it goes through the real path — StdioTransport over an in-memory
// byte stream (newline framing, JSON parsing) → RpcPeer — while four requests of ours are
// outstanding (initialize without a deadline, tools/list with one, tools/call with
// progress and a total cap, ping). Each line is also classified directly.
//
// Invariants:
//  - classify_message: a request/notification has a method, a response exactly one of
//    result / error (wire), ids are strings or numbers (or null in an error response);
//    describe_json stays within its bound;
//  - every request we sent completes exactly once (answered, failed, timed out, or failed
//    by the close), and none after the peer closed; on_close fires once;
//  - everything the client writes back is one JSON-RPC 2.0 object per line, and a
//    response to a server request echoes that request's id.
//
// Control byte: bits 0-3 chunking seed, bits 4-5 max chunk (1, 7, 64, whole), bit 6
// end by process exit instead of close(), bit 7 tiny message limit (256 bytes).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "jsonrpc/message.hpp"
#include "mcprt/jsonrpc.hpp"
#include "mcprt/stdio_transport.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/testing/memory_byte_stream.hpp"

namespace {

using mcprt::json;
using mcprt::fuzz::as_text;

void check_classification(const json& value, std::vector<json>& ids) {
  if (value.is_object() && value.contains("id")) ids.push_back(value.at("id"));
  mcprt::detail::Message m = mcprt::detail::classify_message(json(value));
  switch (m.kind) {
    case mcprt::detail::MessageKind::request:
      FUZZ_CHECK(mcprt::detail::is_valid_id(m.id));
      FUZZ_CHECK(value.is_object() && value.at("method").is_string());
      break;
    case mcprt::detail::MessageKind::notification:
      FUZZ_CHECK(value.is_object() && !value.contains("id"));
      break;
    case mcprt::detail::MessageKind::response:
      FUZZ_CHECK(value.contains("result") != value.contains("error"));
      FUZZ_CHECK(m.error.has_value() == value.contains("error"));
      if (m.error) FUZZ_CHECK(m.error->is_wire());
      FUZZ_CHECK(mcprt::detail::is_valid_id(m.id) || (m.error && m.id.is_null()));
      break;
    case mcprt::detail::MessageKind::invalid:
      FUZZ_CHECK(!m.problem.empty());
      break;
  }
  if (auto id = mcprt::detail::id_as_integer(m.id)) {
    // An integer id and its decimal string name the same request.
    FUZZ_CHECK(*id < 0 || *id >= 1000000000000000000 ||
               mcprt::detail::id_as_integer(json(std::to_string(*id))) == id);
  }
  FUZZ_CHECK(mcprt::detail::describe_json(value, 60).size() <= 63);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t control = bytes[0];
  const std::string_view data = as_text(bytes + 1, size - 1);

  // The classifier alone, line by line (batches element by element).
  std::vector<json> input_ids;  // every id the server sent, valid or not
  std::string_view rest = data;
  while (!rest.empty()) {
    std::string_view line = mcprt::fuzz::take_line(rest);
    json value = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) continue;
    if (value.is_array()) {
      for (const auto& element : value) check_classification(element, input_ids);
    } else {
      check_classification(value, input_ids);
    }
  }

  // The whole path.
  mcprt::testing::ManualExecutor ex;
  mcprt::testing::CapturingLogger log;
  auto stream = std::make_unique<mcprt::testing::MemoryByteStream>(ex);
  mcprt::testing::MemoryByteStream::Remote remote = stream->remote();
  mcprt::StdioTransportOptions topts;
  topts.server_name = "fuzz";
  topts.logger = &log;
  topts.max_message_bytes = (control & 0x80) ? 256 : 1u << 20;
  mcprt::RpcPeer peer(ex, mcprt::make_stdio_transport(ex, std::move(stream), topts), &log);

  int closes = 0;
  bool closed = false;
  mcprt::RpcPeer::Handlers handlers;
  handlers.on_request = [&](const mcprt::IncomingRequest& r, mcprt::Responder respond) {
    if (r.method == "ping") {
      respond(json::object());
    } else if (r.method == "roots/list") {
      respond(json{{"roots", json::array({{{"uri", "file:///repo"}, {"name", "repo"}}})}});
      respond(json::object());  // a second reply must be ignored
    } else {
      respond(mcprt::Error::wire(mcprt::rpc_code::kMethodNotFound, "Method not found: " + r.method));
    }
  };
  handlers.on_notification = [](const std::string&, const json&) {};
  handlers.on_close = [&](const mcprt::Error&) {
    ++closes;
    closed = true;
  };
  peer.start(std::move(handlers));

  constexpr int kRequests = 4;
  int completions[kRequests] = {0, 0, 0, 0};
  bool sent[kRequests] = {false, false, false, false};
  auto done = [&](int i) {
    return [&completions, &closed, i](mcprt::Result<json> r) {
      FUZZ_CHECK(!closed);  // every pending request fails before on_close
      ++completions[i];
      if (!r.ok()) (void)r.error().describe();
    };
  };
  mcprt::RequestOptions no_deadline;
  sent[0] = peer.request("initialize",
                         json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                              {"clientInfo", {{"name", "mcprt"}, {"version", "0"}}}},
                         no_deadline, done(0))
                .ok();
  mcprt::RequestOptions list_opts;
  list_opts.timeout = mcprt::Millis(5000);
  sent[1] = peer.request("tools/list", json::object(), list_opts, done(1)).ok();
  mcprt::RequestOptions call_opts;
  call_opts.timeout = mcprt::Millis(1000);
  call_opts.max_total_timeout = mcprt::Millis(3000);
  call_opts.on_progress = [](const json& p) { FUZZ_CHECK(p.is_object()); };
  sent[2] = peer.request("tools/call", json{{"name", "echo"}, {"arguments", {{"message", "hi"}}}},
                         call_opts, done(2))
                .ok();
  sent[3] = peer.request("ping", nullptr, no_deadline, done(3)).ok();
  ex.run_until_idle();
  (void)remote.take_lines();  // our four requests

  static constexpr std::size_t kMaxChunk[] = {1, 7, 64, 1u << 30};
  remote.push_random_chunks(data, control & 0x0F, kMaxChunk[(control >> 4) & 3]);
  ex.run_until_idle();
  ex.advance(mcprt::Millis(1500));  // tools/call's deadline
  ex.advance(mcprt::Millis(5000));  // tools/list's

  if (control & 0x40) {
    remote.exit(1, "fuzz server exiting");
  } else {
    peer.close();
  }
  ex.run_until_idle();
  for (int i = 0; i < 8 && ex.advance_to_next_timer(); ++i) {
  }

  FUZZ_CHECK(closes == 1 && peer.closed());
  for (int i = 0; i < kRequests; ++i) FUZZ_CHECK(completions[i] == (sent[i] ? 1 : 0));
  FUZZ_CHECK(peer.pending_count() == 0);
  FUZZ_CHECK(!peer.request("ping", nullptr, no_deadline, [](mcprt::Result<json>) { FUZZ_CHECK(false); })
                  .ok());
  ex.run_until_idle();

  // What went back to the server: one JSON-RPC object per line; answers echo ids the
  // server sent (null only in an error answer when no usable id was there).
  for (const std::string& line : remote.take_lines()) {
    json out = json::parse(line, nullptr, false);
    FUZZ_CHECK(!out.is_discarded() && out.is_object());
    FUZZ_CHECK(out.value("jsonrpc", "") == "2.0");
    if (out.contains("method")) continue;  // our own requests and notifications
    FUZZ_CHECK(out.contains("id"));
    if (out.at("id").is_null()) {
      FUZZ_CHECK(out.contains("error"));
      continue;
    }
    // An id of a message that parsed, or one salvaged from a broken line: either way
    // its text was in what the server sent.
    const json& id = out.at("id");
    bool known = data.find(id.dump()) != std::string_view::npos ||
                 (id.is_string() && data.find(id.get<std::string>()) != std::string_view::npos);
    for (const json& sent : input_ids) known = known || sent == id;
    if (!known) std::fprintf(stderr, "an answer with an id the server never sent: %s\n", line.c_str());
    FUZZ_CHECK(known);
  }
  return 0;
}
