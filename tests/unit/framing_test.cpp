// NewlineFramer: the stdio line framing (SPEC §3.2).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mcprt/framing.hpp"

namespace mcprt {
namespace framing_test {  // this file's own names in a unity batch
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view l) { lines.emplace_back(l); };
  }
};

TEST(NewlineFramer, SplitsOneChunkIntoLines) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("a\nbb\nccc\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "bb", "ccc"}));
  EXPECT_EQ(f.buffered(), 0u);
}

TEST(NewlineFramer, JoinsALineSplitAcrossChunks) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("{\"a\":", c.sink()).ok());
  EXPECT_TRUE(c.lines.empty());
  EXPECT_EQ(f.buffered(), 5u);
  ASSERT_TRUE(f.feed("1}", c.sink()).ok());
  ASSERT_TRUE(f.feed("\n{\"b\"", c.sink()).ok());
  ASSERT_TRUE(f.feed(":2}\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
}

TEST(NewlineFramer, EveryOneByteChunkingGivesTheSameLines) {
  const std::string stream = "first\r\nsecond\n\nthird\r\n\r\nfourth\n";
  NewlineFramer f;
  Collected c;
  for (char ch : stream) ASSERT_TRUE(f.feed(std::string_view(&ch, 1), c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"first", "second", "third", "fourth"}));
}

TEST(NewlineFramer, StripsCarriageReturnOfCrlfEvenWhenSplitBetweenCrAndLf) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("abc\r", c.sink()).ok());
  ASSERT_TRUE(f.feed("\ndef\r\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abc", "def"}));
}

TEST(NewlineFramer, KeepsACarriageReturnInsideALine) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("a\rb\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a\rb"}));
}

TEST(NewlineFramer, SkipsEmptyLines) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("\n\n\r\nx\n\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"x"}));
}

TEST(NewlineFramer, HoldsAnUnterminatedLastLine) {
  NewlineFramer f;
  Collected c;
  ASSERT_TRUE(f.feed("done\npartial", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"done"}));
  EXPECT_EQ(f.buffered(), 7u);
}

TEST(NewlineFramer, AcceptsALineOfExactlyTheLimit) {
  NewlineFramer f(8);
  Collected c;
  ASSERT_TRUE(f.feed("12345678\n", c.sink()).ok());
  ASSERT_TRUE(f.feed("1234", c.sink()).ok());
  ASSERT_TRUE(f.feed("5678\r", c.sink()).ok());  // limit + a CR still waiting for its LF
  ASSERT_TRUE(f.feed("\n", c.sink()).ok());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"12345678", "12345678"}));
}

TEST(NewlineFramer, RejectsALineOneByteOverTheLimitInOneChunk) {
  NewlineFramer f(8);
  Collected c;
  Status s = f.feed("ok\n123456789\nlater\n", c.sink());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok"}));  // lines before it were delivered
}

TEST(NewlineFramer, RejectsAnOverLimitLineBeforeItsNewlineArrives) {
  NewlineFramer f(8);
  Collected c;
  ASSERT_TRUE(f.feed("12345", c.sink()).ok());
  Status s = f.feed("6789", c.sink());  // 9 bytes pending, no newline yet
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large);
  EXPECT_LE(f.buffered(), 9u);
}

TEST(NewlineFramer, RejectsAnOverLimitLineCompletedAcrossChunks) {
  NewlineFramer f(8);
  Collected c;
  ASSERT_TRUE(f.feed("1234", c.sink()).ok());
  Status s = f.feed("56789\n", c.sink());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large);
  EXPECT_TRUE(c.lines.empty());
}

TEST(NewlineFramer, StaysFailedAfterAnError) {
  NewlineFramer f(4);
  Collected c;
  ASSERT_FALSE(f.feed("toolong\n", c.sink()).ok());
  Status again = f.feed("ok\n", c.sink());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::message_too_large);
  EXPECT_TRUE(c.lines.empty());
  EXPECT_TRUE(f.failed());
}

TEST(NewlineFramer, DeliversManyLinesOfOneHugeChunkInOrder) {
  std::string big;
  const int n = 20000;
  for (int i = 0; i < n; ++i) big += "{\"id\":" + std::to_string(i) + "}\n";
  NewlineFramer f;
  int count = 0;
  bool in_order = true;
  ASSERT_TRUE(f.feed(big, [&](std::string_view line) {
                 if (line != "{\"id\":" + std::to_string(count) + "}") in_order = false;
                 ++count;
               }).ok());
  EXPECT_EQ(count, n);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(f.buffered(), 0u);
}

}  // namespace
}  // namespace framing_test
}  // namespace mcprt
