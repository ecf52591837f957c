// The kept message writer (core/src/jsonrpc/message_writer.hpp): what it writes is what
// json::dump(-1, ' ', false, replace) writes, whatever the previous message left in its
// buffer, and a buffer a large message grew is given back.

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
  for (const json& m : messages) EXPECT_EQ(writer.write(m), dumped(m));
}

TEST(MessageWriter, TheTextMayBeAppendedToUntilTheNextWrite) {
  MessageWriter writer;
  std::string& line = writer.write(json{{"id", 1}});
  line.push_back('\n');
  EXPECT_EQ(line, "{\"id\":1}\n");
  EXPECT_EQ(writer.write(json{{"id", 2}}), "{\"id\":2}");
}

TEST(MessageWriter, ABufferGrownPastTheKeptCapacityIsGivenBackAtTheNextWrite) {
  MessageWriter writer;
  const json big(std::string(MessageWriter::kKeptCapacity * 2, 'x'));
  EXPECT_EQ(writer.write(big).size(), MessageWriter::kKeptCapacity * 2 + 2);
  const std::string& small = writer.write(json(1));
  EXPECT_EQ(small, "1");
  EXPECT_LE(small.capacity(), MessageWriter::kKeptCapacity);
}

TEST(MessageWriter, EachThreadHasOneWriter) {
  EXPECT_EQ(&thread_message_writer(), &thread_message_writer());
}

}  // namespace
}  // namespace mcprt::detail
