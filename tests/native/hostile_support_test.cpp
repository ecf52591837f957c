// The hostile suite's own tools must see what they claim to see: a leaked process, a peak
// RSS, a timeout, and the requests a raw server received.
#include "hostile_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mcprt::native::test {
namespace hostile_support_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(HostileSupport, RunMeasuredCapturesOutputExitCodeAndStdin) {
  MeasuredRun r = run_measured({"/bin/sh", "-c", "cat; echo err >&2; exit 3"},
                               {.stdin_text = "hello"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "hello");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.peak_rss_kib, 0);
  EXPECT_TRUE(r.leftovers.empty());
}

TEST(HostileSupport, RunMeasuredReportsAndKillsALeftoverProcess) {
  // The background sleep outlives the shell: it is what a leaked server looks like.
  MeasuredRun r = run_measured({"/bin/sh", "-c", "sleep 30 & echo started"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "started\n");
  ASSERT_THAT(r.leftovers, SizeIs(1));
  EXPECT_THAT(r.leftovers[0], HasSubstr("sleep"));
  EXPECT_LT(r.wall_ms, 5000);  // the leaked sleep holding stdout did not stall the run
}

TEST(HostileSupport, RunMeasuredKillsAChildThatRunsPastItsTimeout) {
  MeasuredRun r = run_measured({"/bin/sleep", "30"}, {.timeout = Millis(300)});
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_TRUE(r.leftovers.empty());
}

TEST(HostileSupport, RunMeasuredSeesPeakMemory) {
  // 200 MB touched by the child shows in its peak RSS.
  MeasuredRun r = run_measured(
      {"/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=200M", "count=1", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.peak_rss_kib, 190 * 1024);
}

TEST(HostileSupport, RawHttpServerRecordsRequestsAndSendsRawBytes) {
  RawHttpServer server([](RawHttpServer::Connection& c) {
    c.read_body();
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
  });
  // A hand-written client: the raw server must see exactly these bytes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request =
      "POST /p?q=1 HTTP/1.1\r\nHost: x\r\nX-Probe: 1\r\nContent-Length: 3\r\n\r\nabc";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[256];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, n);
  ::close(fd);
  EXPECT_THAT(answer, ::testing::EndsWith("\r\n\r\nok"));
  auto requests = server.requests();
  ASSERT_THAT(requests, SizeIs(1));
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/p?q=1");
  EXPECT_EQ(requests[0].header("x-probe"), "1");
  EXPECT_EQ(requests[0].body, "abc");
  EXPECT_EQ(server.connection_count(), 1u);
}

}  // namespace
}  // namespace hostile_support_test
}  // namespace mcprt::native::test
