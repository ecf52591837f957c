// The kept message writer (core/src/jsonrpc/message_writer.hpp): what it writes is what
// json::dump(-1, ' ', false, replace) writes, whatever the previous message left in its
// buffer, and a buffer a large message grew is given back once its text was used.

#include "jsonrpc/message_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mcprt::detail {
namespace {

std::string dumped(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(MessageWriter, WritesWhatDumpWritesOneMessageAfterAnother) {
  MessageWriter writer;
  const std::vector<json> messages = {
      json::parse(R"({"jsonrpc":"2.0","id":7,"method":"tools/call",)"
                  R"("params":{"name":"echo","arguments":{"message":"hello","n":[1,2.5,null,true]}}})"),
      json("a"),  // shorter than the one before: nothing of it may remain
      json::parse(R"({"text":"é \" \\ \n \u0001 /","nested":{"b":{},"a":[]}})"),
      json(std::string("bad \xff utf-8")),  // replaced, not thrown
      json::object(),
  };
  for (const json& m : messages) EXPECT_EQ(writer.text(m), dumped(m));
}

// Random messages of every kind of value: strings that need escaping (quotes, control
// characters, UTF-8, invalid UTF-8) or not, keys of both kinds, integers at their limits,
// floats, booleans, nulls, nested containers.
json random_value(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto text = [&] {
    static const std::vector<std::string> pieces = {
        "hello", "tools/call", "", " ", "\"", "\\", "\n", "\t", std::string(1, '\0'), "\x01",
        "\x7f", "é", "日本", "\xf0\x9f\x98\x80", "\xff", "\xc3", "/", "~", "a\"b", "{}[]"};
    std::string s;
    for (int i = pick(4); i > 0; --i) s += pieces[static_cast<std::size_t>(pick(static_cast<int>(pieces.size())))];
    return s;
  };
  const int kind = depth >= 5 ? pick(7) : pick(9);
  switch (kind) {
    case 0: return json(text());
    case 1: return json(static_cast<std::int64_t>(rng()) - (1ll << 31));
    case 2: return json(pick(2) == 0 ? std::numeric_limits<std::int64_t>::min()
                                      : std::numeric_limits<std::int64_t>::max());
    case 3: return json(std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(pick(3)));
    case 4: return json(static_cast<double>(rng()) / 7.0 - 1e5);
    case 5: return pick(2) == 0 ? json(true) : json(nullptr);
    case 6: return json(false);
    case 7: {
      json object = json::object();
      for (int i = pick(5); i > 0; --i) object[text()] = random_value(rng, depth + 1);
      return object;
    }
    default: {
      json array = json::array();
      for (int i = pick(5); i > 0; --i) array.push_back(random_value(rng, depth + 1));
      return array;
    }
  }
}

TEST(MessageWriter, WritesWhatDumpWritesForRandomMessages) {
  MessageWriter writer;
  std::mt19937 rng(20261205);
  for (int i = 0; i < 3000; ++i) {
    const json message = random_value(rng, 0);
    ASSERT_EQ(writer.text(message), dumped(message)) << "message " << i;
  }
}

TEST(MessageWriter, HandsTheTextToItsUserWhoMayAppendAndReturnsWhatTheUserReturns) {
  MessageWriter writer;
  const std::size_t size = writer.write(json{{"id", 1}}, [](std::string& line) {
    line.push_back('\n');
    EXPECT_EQ(line, "{\"id\":1}\n");
    return line.size();
  });
  EXPECT_EQ(size, 9u);
  EXPECT_EQ(writer.text(json{{"id", 2}}), "{\"id\":2}");
}

TEST(MessageWriter, ABufferGrownPastTheKeptCapacityIsGivenBackOnceUsed) {
  MessageWriter writer;
  writer.text(json(std::string(1000, 'x')));
  const std::size_t kept = writer.capacity();
  EXPECT_GE(kept, 1000u) << "a small message's buffer is kept for the next";
  const json big(std::string(MessageWriter::kKeptCapacity * 2, 'x'));
  std::size_t capacity_in_use = 0;
  writer.write(big, [&](std::string& text) {
    capacity_in_use = text.capacity();
    return 0;
  });
  EXPECT_GT(capacity_in_use, MessageWriter::kKeptCapacity * 2);
  EXPECT_LE(writer.capacity(), MessageWriter::kKeptCapacity) << "not kept once the text was used";
  EXPECT_EQ(writer.text(json(1)), "1");
}

TEST(MessageWriter, EachThreadHasOneWriter) {
  EXPECT_EQ(&thread_message_writer(), &thread_message_writer());
}

}  // namespace
}  // namespace mcprt::detail
