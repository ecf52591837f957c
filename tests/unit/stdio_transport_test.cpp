// The stdio transport's rules (SPEC §3.2) over an in-memory ByteStream.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "mcprt/stdio_transport.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/testing/memory_byte_stream.hpp"

namespace mcprt {
namespace stdio_transport_test {  // this file's own names in a unity batch
namespace {

using testing::ManualExecutor;
using testing::MemoryByteStream;

class CapturingLogger final : public Logger {
 public:
  struct Entry {
    LogLevel level;
    std::string message;
  };
  std::vector<Entry> entries;
  void log(LogLevel level, std::string_view message) override {
    entries.push_back({level, std::string(message)});
  }
};

class StdioTransportTest : public ::testing::Test {
 protected:
  void make(std::size_t max_bytes = 1024,
            std::size_t max_levels = kDefaultMaxJsonNestingLevels) {
    auto stream = std::make_unique<MemoryByteStream>(ex);
    remote = std::make_unique<MemoryByteStream::Remote>(stream->remote());
    StdioTransportOptions o;
    o.server_name = "srv";
    o.max_message_bytes = max_bytes;
    o.max_json_nesting_levels = max_levels;
    o.logger = &logger;
    transport = make_stdio_transport(ex, std::move(stream), o);
  }

  void start() {
    TransportHandlers h;
    h.on_message = [this](json m) {
      messages.push_back(std::move(m));
      if (on_message_hook) on_message_hook();
    };
    h.on_unreadable = [this](const UnreadableMessage& u) { unreadable.push_back(u); };
    h.on_close = [this](const Error& e) { closes.push_back(e); };
    transport->start(std::move(h));
  }

  ManualExecutor ex;
  CapturingLogger logger;
  std::unique_ptr<MemoryByteStream::Remote> remote;
  std::unique_ptr<Transport> transport;
  std::vector<json> messages;
  std::vector<UnreadableMessage> unreadable;
  std::vector<Error> closes;
  std::function<void()> on_message_hook;
};

TEST_F(StdioTransportTest, DeliversMessagesSplitAcrossChunksInOrder) {
  make();
  start();
  std::string stream;
  for (int i = 0; i < 50; ++i) {
    stream += json{{"jsonrpc", "2.0"}, {"id", i}, {"result", {{"text", "h\xC3\xA9"}}}}.dump() + "\n";
  }
  remote->push_random_chunks(stream, 7, 13);
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(messages[i]["id"], i);
  EXPECT_EQ(messages[3]["result"]["text"], "h\xC3\xA9");
  EXPECT_TRUE(closes.empty());
}

TEST_F(StdioTransportTest, AcceptsCrlfLineEnds) {
  make();
  start();
  remote->push("{\"id\":1}\r\n{\"id\":2}\r\n");
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["id"], 2);
}

TEST_F(StdioTransportTest, DeliversNothingInsidePushOnlyThroughTheExecutor) {
  make();
  start();
  remote->push("{\"id\":1}\n");
  EXPECT_TRUE(messages.empty());
  ex.run_until_idle();
  EXPECT_EQ(messages.size(), 1u);
}

TEST_F(StdioTransportTest, SkipsANonJsonLineLogsItAndStaysUp) {
  make();
  start();
  const std::string noise = "npm WARN something " + std::string(300, 'x');
  remote->push("{\"id\":1}\n" + noise + "\n{\"id\":2}\n");
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["id"], 2);
  EXPECT_TRUE(closes.empty());
  EXPECT_FALSE(remote->close_requested());
  ASSERT_EQ(logger.entries.size(), 1u);
  EXPECT_EQ(logger.entries[0].level, LogLevel::warn);
  const std::string& m = logger.entries[0].message;
  EXPECT_NE(m.find("Server \"srv\""), std::string::npos) << m;
  EXPECT_NE(m.find(noise.substr(0, 200)), std::string::npos) << m;
  EXPECT_EQ(m.find(noise.substr(0, 201)), std::string::npos) << "logged more than 200 bytes: " << m;
}

TEST_F(StdioTransportTest, HandsAnUnreadableLineUpWithItsIdAndStaysUp) {
  make(1u << 20);
  start();
  const std::string deep = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" +
                           std::string(1000, '[') + std::string(1000, ']') + "}";
  remote->push("{\"id\":1}\n" + deep + "\n{\"method\":\"m\",\"id\":\"x\",\"p\":\"\xFF\"}\n{\"id\":2}\n");
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["id"], 2);
  ASSERT_EQ(unreadable.size(), 2u);
  EXPECT_EQ(unreadable[0].id, 7);
  EXPECT_FALSE(unreadable[0].has_method);
  EXPECT_EQ(unreadable[0].size_bytes, deep.size());
  // The envelope is level 1 and the result's arrays 2 and up: the 128th "[" opens 129.
  EXPECT_EQ(unreadable[0].problem, "JSON nesting deeper than 128 levels at byte " +
                                       std::to_string(deep.find('[') + 127));
  EXPECT_EQ(unreadable[1].id, "x");
  EXPECT_TRUE(unreadable[1].has_method);
  EXPECT_EQ(unreadable[1].problem.rfind("invalid UTF-8 at byte ", 0), 0u) << unreadable[1].problem;
  EXPECT_TRUE(closes.empty());
  EXPECT_FALSE(remote->close_requested());
  ASSERT_EQ(logger.entries.size(), 2u);
  EXPECT_EQ(logger.entries[0].level, LogLevel::warn);
  EXPECT_EQ(logger.entries[0].message.rfind("Server \"srv\": unreadable message (" +
                                                std::to_string(deep.size()) + " bytes, id 7): " +
                                                unreadable[0].problem,
                                            0),
            0u)
      << logger.entries[0].message;
}

TEST_F(StdioTransportTest, HonoursItsNestingLimitOption) {
  make(1024, 3);
  start();
  remote->push("[[[1]]]\n[[[[1]]]]\n");
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 1u);
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_EQ(unreadable[0].problem, "JSON nesting deeper than 3 levels at byte 3");
}

TEST_F(StdioTransportTest, ClosesWithMessageTooLargeOnAnOverSizeLine) {
  make(64);
  start();
  remote->push("{\"id\":1}\n{\"data\":\"" + std::string(100, 'a') + "\"}\n{\"id\":3}\n");
  ex.run_until_idle();
  ASSERT_EQ(messages.size(), 1u);  // the line before it, not the one after
  EXPECT_TRUE(remote->close_requested());
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::message_too_large);
  EXPECT_NE(closes[0].message.find("Server \"srv\""), std::string::npos) << closes[0].message;
  EXPECT_NE(closes[0].message.find("64 bytes"), std::string::npos) << closes[0].message;
}

TEST_F(StdioTransportTest, OverSizeErrorWaitsForTheStreamToFinishClosing) {
  make(16);
  start();
  remote->hold_close(true);
  remote->push(std::string(40, 'z'));  // no newline: caught while still pending
  ex.run_until_idle();
  EXPECT_TRUE(remote->close_requested());
  EXPECT_TRUE(closes.empty());
  remote->finish_close();
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::message_too_large);
}

TEST_F(StdioTransportTest, ReportsExitCodeAndStderrTailOnExit) {
  make();
  start();
  remote->exit(1, "Error: missing API key\n");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::exited);
  EXPECT_EQ(closes[0].message, "Server \"srv\": server exited (code 1); stderr: Error: missing API key");
  EXPECT_EQ(closes[0].data["exit_code"], 1);
  EXPECT_EQ(transport->diagnostics(), "Error: missing API key\n");
}

TEST_F(StdioTransportTest, OmitsTheStderrPartWhenTheTailIsEmpty) {
  make();
  start();
  remote->exit(0);
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].message, "Server \"srv\": server exited (code 0)");
}

TEST_F(StdioTransportTest, ReportsTheSignalOfAKilledServer) {
  make();
  start();
  remote->kill(9, "oom");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::exited);
  EXPECT_EQ(closes[0].message, "Server \"srv\": server exited (killed by signal 9); stderr: oom");
}

TEST_F(StdioTransportTest, DeliversMessagesSentJustBeforeTheExit) {
  make();
  start();
  remote->push("{\"id\":1}\n");
  remote->exit(2);
  ex.run_until_idle();
  EXPECT_EQ(messages.size(), 1u);
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::exited);
}

TEST_F(StdioTransportTest, KeepsTheStreamErrorCodeForANonExitEnd) {
  make();
  start();
  remote->end(StreamClosed{Error::make(ErrorCode::transport, "read failed: EIO"), std::nullopt, ""});
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message, "Server \"srv\": read failed: EIO");
}

TEST_F(StdioTransportTest, LocalCloseReportsClosedOnceAndNotInsideClose) {
  make();
  start();
  transport->close();
  transport->close();
  EXPECT_TRUE(closes.empty());  // never inside close()
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
  EXPECT_EQ(remote->close_calls(), 1);
}

TEST_F(StdioTransportTest, FiresOnCloseExactlyOnceWhenExitAndCloseRace) {
  make();
  start();
  remote->exit(1, "bye");  // queued before the local close
  transport->close();
  ex.run_until_idle();
  remote->exit(3);
  ex.run_until_idle();
  EXPECT_EQ(closes.size(), 1u);
}

TEST_F(StdioTransportTest, DeliversNoMessageAfterClose) {
  make();
  start();
  remote->push("{\"id\":1}\n");
  transport->close();
  ex.run_until_idle();
  remote->push("{\"id\":2}\n");
  ex.run_until_idle();
  EXPECT_TRUE(messages.empty());
  EXPECT_EQ(closes.size(), 1u);
}

TEST_F(StdioTransportTest, SendWritesOneLinePerMessage) {
  make();
  start();
  ASSERT_TRUE(transport->send(json{{"jsonrpc", "2.0"}, {"method", "ping"}, {"id", 1}}).ok());
  ASSERT_TRUE(transport->send(json{{"text", "line1\nline2"}}).ok());
  auto lines = remote->take_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(json::parse(lines[0]), (json{{"jsonrpc", "2.0"}, {"method", "ping"}, {"id", 1}}));
  EXPECT_EQ(json::parse(lines[1])["text"], "line1\nline2");  // the newline is escaped
  EXPECT_TRUE(remote->written().empty());
}

TEST_F(StdioTransportTest, SendDoesNotThrowOnInvalidUtf8) {
  make();
  start();
  EXPECT_TRUE(transport->send(json{{"bad", std::string("a\xFF" "b")}}).ok());
  EXPECT_EQ(remote->take_lines().size(), 1u);
}

TEST_F(StdioTransportTest, SendFailsAfterClose) {
  make();
  start();
  transport->close();
  Status during = transport->send(json{{"id", 1}});
  ASSERT_FALSE(during.ok());
  EXPECT_EQ(during.error().code, ErrorCode::closed);
  ex.run_until_idle();
  Status after = transport->send(json{{"id", 2}});
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code, ErrorCode::closed);
  EXPECT_NE(after.error().message.find("Server \"srv\""), std::string::npos);
  EXPECT_TRUE(remote->written().empty());
}

TEST_F(StdioTransportTest, SendFailsAfterTheServerExited) {
  make();
  start();
  remote->exit(1);
  ex.run_until_idle();
  EXPECT_FALSE(transport->send(json{{"id", 1}}).ok());
}

TEST_F(StdioTransportTest, SendReportsAWriteFailureWithTheServerName) {
  make();
  start();
  remote->fail_writes(Error::make(ErrorCode::transport, "broken pipe"));
  Status s = transport->send(json{{"id", 1}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::transport);
  EXPECT_EQ(s.error().message, "Server \"srv\": broken pipe");
}

TEST_F(StdioTransportTest, DiagnosticsReturnTheLiveStderrTail) {
  make();
  start();
  remote->set_stderr("warming up\n");
  EXPECT_EQ(transport->diagnostics(), "warming up\n");
}

TEST_F(StdioTransportTest, StopsDeliveringTheChunkWhenAHandlerCloses) {
  make();
  start();
  on_message_hook = [this] { transport->close(); };
  remote->push("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n");
  ex.run_until_idle();
  EXPECT_EQ(messages.size(), 1u);
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
}

TEST_F(StdioTransportTest, SurvivesBeingDestroyedByItsOwnHandler) {
  make();
  start();
  on_message_hook = [this] { transport.reset(); };
  remote->push("{\"id\":1}\n{\"id\":2}\n");
  ex.run_until_idle();
  EXPECT_EQ(messages.size(), 1u);
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(remote->destroyed());
  remote->exit(1);
  ex.run_until_idle();
  EXPECT_TRUE(closes.empty());  // nothing runs after destruction
}

TEST_F(StdioTransportTest, RunsNoHandlerAfterDestruction) {
  make();
  start();
  remote->push("{\"id\":1}\n");
  remote->exit(1);
  transport.reset();
  ex.run_until_idle();
  EXPECT_TRUE(messages.empty());
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(remote->destroyed());
}

TEST_F(StdioTransportTest, CloseBeforeStartReportsClosedAfterStart) {
  make();
  transport->close();
  start();
  EXPECT_TRUE(closes.empty());
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
}

}  // namespace
}  // namespace stdio_transport_test
}  // namespace mcprt
