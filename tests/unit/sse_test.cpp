// SseParser: the WHATWG event-stream interpretation used by both HTTP transports.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mcprt/framing.hpp"

namespace mcprt {
namespace sse_test {  // this file's own names in a unity batch
namespace {

struct Ev {
  std::string event, data, id;
  bool has_id;
  bool operator==(const Ev&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Ev& e) {
  return os << "{event=" << e.event << " data=" << ::testing::PrintToString(e.data) << " id=" << e.id
            << " has_id=" << e.has_id << "}";
}

struct Parsed {
  std::vector<Ev> events;
  std::optional<long long> retry;
  std::string last_id;
  bool ok = true;
};

Parsed parse_chunks(const std::vector<std::string>& chunks, std::size_t max = 1 << 20) {
  SseParser p(max);
  Parsed r;
  for (const auto& c : chunks) {
    Status s = p.feed(c, [&](const SseEvent& e) {
      r.events.push_back({e.event, e.data, e.id, e.has_id});
    });
    if (!s) {
      r.ok = false;
      break;
    }
  }
  r.retry = p.retry_ms();
  r.last_id = p.last_event_id();
  return r;
}

Parsed parse(std::string_view stream) { return parse_chunks({std::string(stream)}); }

std::uint32_t next(std::uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

std::vector<std::string> random_chunks(std::string_view s, std::uint32_t seed) {
  std::vector<std::string> out;
  std::uint32_t st = seed * 2654435761u + 1;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t len = 1 + next(st) % 7;
    if (len > s.size() - i) len = s.size() - i;
    out.emplace_back(s.substr(i, len));
    i += len;
  }
  return out;
}

// Parses `stream` whole, byte by byte and in 200 random chunkings; all must agree.
Parsed parse_every_way(std::string_view stream) {
  Parsed whole = parse(stream);
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  Parsed single = parse_chunks(bytes);
  EXPECT_EQ(single.events, whole.events) << "byte-by-byte differs";
  EXPECT_EQ(single.retry, whole.retry);
  EXPECT_EQ(single.last_id, whole.last_id);
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    Parsed r = parse_chunks(random_chunks(stream, seed));
    EXPECT_EQ(r.events, whole.events) << "seed " << seed;
    EXPECT_EQ(r.retry, whole.retry) << "seed " << seed;
    EXPECT_EQ(r.last_id, whole.last_id) << "seed " << seed;
    if (::testing::Test::HasFailure()) break;
  }
  return whole;
}

TEST(SseParser, DispatchesAMessageEventOnABlankLine) {
  Parsed r = parse_every_way("data: {\"jsonrpc\":\"2.0\"}\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], (Ev{"message", "{\"jsonrpc\":\"2.0\"}", "", false}));
}

TEST(SseParser, JoinsDataLinesWithNewlineAndDropsTheLastNewline) {
  Parsed r = parse_every_way("data: a\ndata: b\ndata:\ndata: c\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "a\nb\n\nc");
}

TEST(SseParser, AcceptsCrLfAndCrLineEndsAlike) {
  Parsed lf = parse_every_way("event: e\ndata: x\ndata: y\n\n");
  Parsed crlf = parse_every_way("event: e\r\ndata: x\r\ndata: y\r\n\r\n");
  Parsed cr = parse_every_way("event: e\rdata: x\rdata: y\r\r");
  ASSERT_EQ(lf.events.size(), 1u);
  EXPECT_EQ(lf.events[0], (Ev{"e", "x\ny", "", false}));
  EXPECT_EQ(crlf.events, lf.events);
  EXPECT_EQ(cr.events, lf.events);
}

TEST(SseParser, TreatsCrThenLfAcrossChunksAsOneLineEnd) {
  // "\r" at the end of a chunk and "\n" at the start of the next must not make an
  // extra blank line (which would dispatch early).
  Parsed r = parse_chunks({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "a\nb");
}

TEST(SseParser, SkipsOneLeadingBomEvenWhenSplit) {
  const std::string bom = "\xEF\xBB\xBF";
  Parsed r = parse_every_way(bom + "data: x\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "x");
  Parsed split = parse_chunks({"\xEF", "\xBB", "\xBF" "data: y\n\n"});
  ASSERT_EQ(split.events.size(), 1u);
  EXPECT_EQ(split.events[0].data, "y");
}

TEST(SseParser, StripsOnlyTheFirstBom) {
  // A second BOM is part of the field name, so the line is an unknown field.
  const std::string bom = "\xEF\xBB\xBF";
  Parsed r = parse_every_way(bom + bom + "data: x\n\ndata: y\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "y");
}

TEST(SseParser, IgnoresComments) {
  Parsed r = parse_every_way(": keep-alive\n:\ndata: x\n: in the middle\ndata: y\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "x\ny");
}

TEST(SseParser, ReadsAFieldWithoutColonAsAnEmptyValue) {
  Parsed r = parse_every_way("data\ndata\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "\n");
}

TEST(SseParser, StripsExactlyOneSpaceAfterTheColon) {
  Parsed r = parse_every_way("data:no space\n\ndata:  two spaces\n\ndata:\ttab\n\n");
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].data, "no space");
  EXPECT_EQ(r.events[1].data, " two spaces");
  EXPECT_EQ(r.events[2].data, "\ttab");
}

TEST(SseParser, KeepsColonsInsideTheValue) {
  Parsed r = parse_every_way("data: a: b: c\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "a: b: c");
}

TEST(SseParser, DoesNotDispatchWithoutData) {
  Parsed r = parse_every_way("event: ping\n\nid: 7\n\n\n\n");
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.last_id, "7");  // the id still took effect
}

TEST(SseParser, DispatchesAnEmptyDataField) {
  Parsed r = parse_every_way("data:\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "");
}

TEST(SseParser, UsesTheEventFieldAndDefaultsToMessage) {
  Parsed r = parse_every_way("event: endpoint\ndata: /post\n\ndata: next\n\nevent:\ndata: empty type\n\n");
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].event, "endpoint");
  EXPECT_EQ(r.events[1].event, "message");  // the type does not carry over
  EXPECT_EQ(r.events[2].event, "message");
}

TEST(SseParser, KeepsTheIdAcrossLaterEvents) {
  Parsed r = parse_every_way("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n");
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[0], (Ev{"message", "a", "1", true}));
  EXPECT_EQ(r.events[1], (Ev{"message", "b", "1", false}));
  EXPECT_EQ(r.events[2], (Ev{"message", "c", "2", true}));
  EXPECT_EQ(r.events[3], (Ev{"message", "d", "", true}));  // a bare `id` resets it
  EXPECT_EQ(r.last_id, "");
}

TEST(SseParser, IgnoresAnIdContainingNul) {
  constexpr char kStream[] = "id: good\ndata: a\n\nid: b\0ad\ndata: b\n\n";
  Parsed r = parse_every_way(std::string_view(kStream, sizeof(kStream) - 1));
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1].id, "good");
  EXPECT_FALSE(r.events[1].has_id);
  EXPECT_EQ(r.last_id, "good");
}

TEST(SseParser, AppliesRetryOnlyWhenAllDigits) {
  EXPECT_EQ(parse_every_way("retry: 2500\n").retry, 2500);
  EXPECT_EQ(parse_every_way("retry: 2500\nretry: 12a\nretry: -5\nretry: 1.5\nretry:\n").retry, 2500);
  EXPECT_EQ(parse_every_way("retry: 10\nretry: 20\n").retry, 20);
  EXPECT_FALSE(parse_every_way("retry: soon\n").retry.has_value());
}

TEST(SseParser, IgnoresUnknownFields) {
  Parsed r = parse_every_way("foo: bar\ndata: x\nDATA: y\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "x");  // field names are case-sensitive
}

TEST(SseParser, KeepsMultibyteCharactersSplitAcrossChunks) {
  const std::string text = "data: h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\n\n";  // é € 😀
  Parsed r = parse_every_way(text);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(SseParser, ReplacesInvalidUtf8WithReplacementCharacter) {
  Parsed r = parse_every_way("data: a\xFF" "b\n\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "a\xEF\xBF\xBD" "b");
}

TEST(SseParser, DoesNotDispatchAnEventCutOffByEndOfStream) {
  Parsed r = parse_every_way("data: complete\n\ndata: partial\n");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "complete");
}

TEST(SseParser, ParsesAMixedStreamIdenticallyUnderEveryChunking) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string stream = bom +
                             ": hello\r\n"
                             "retry: 3000\r\n"
                             "event: endpoint\r\n"
                             "data: /messages?session=1\r\n"
                             "\r\n"
                             "id: 41\n"
                             "data: {\"jsonrpc\":\"2.0\",\"id\":1,\n"
                             "data:  \"result\":{}}\n"
                             "\n"
                             "event: x\rdata\rid: 42\r\r"
                             "nonsense\n"
                             "data: caf\xC3\xA9\n\n";
  Parsed r = parse_every_way(stream);
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[0], (Ev{"endpoint", "/messages?session=1", "", false}));
  EXPECT_EQ(r.events[1], (Ev{"message", "{\"jsonrpc\":\"2.0\",\"id\":1,\n \"result\":{}}", "41", true}));
  EXPECT_EQ(r.events[2], (Ev{"x", "", "42", true}));
  EXPECT_EQ(r.events[3], (Ev{"message", "caf\xC3\xA9", "42", false}));
  EXPECT_EQ(r.retry, 3000);
  EXPECT_EQ(r.last_id, "42");
}

TEST(SseParser, RejectsEventDataOverTheLimit) {
  SseParser p(10);
  int events = 0;
  auto count = [&](const SseEvent&) { ++events; };
  ASSERT_TRUE(p.feed("data:1234\ndata:1234\n", count).ok());  // "1234\n1234": 9 bytes
  Status s = p.feed("data:1234\n", count);                  // would be 14 bytes
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large);
  Status again = p.feed("\n", count);
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(events, 0);
}

TEST(SseParser, AcceptsEventDataOfExactlyTheLimit) {
  SseParser p(11);
  std::string data;
  ASSERT_TRUE(p.feed("data: 12345\ndata: 67890\n\n", [&](const SseEvent& e) { data = e.data; }).ok());
  EXPECT_EQ(data, "12345\n67890");
}

TEST(SseParser, RejectsAnOverLongLineWhateverTheChunking) {
  const std::string line = "data: " + std::string(20, 'x');  // 26 bytes
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    auto chunks = random_chunks(line, seed);  // no line end yet: the pending line grows
    Parsed r = parse_chunks(chunks, 25);
    EXPECT_FALSE(r.ok) << "seed " << seed;
  }
  EXPECT_TRUE(parse_chunks({line + "\n\n"}, 26).ok);
  EXPECT_FALSE(parse_chunks({line + "\n\n"}, 25).ok);
}

}  // namespace
}  // namespace sse_test
}  // namespace mcprt
