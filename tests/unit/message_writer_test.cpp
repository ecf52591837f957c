// The kept message writer (core/src/jsonrpc/message_writer.hpp): what it writes is what
// json::dump(-1, ' ', false, replace) writes, whatever the previous message left in its
// buffer, and a buffer a large message grew is given back once its text was used.

#include "jsonrpc/message_writer.hpp"

#include <gtest/gtest.h>

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
