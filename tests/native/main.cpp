// mcprt_native_tests entry point. Several roles, like libuv's test runner:
//  - `mcprt_native_tests --scripted-server=<scenario> [args...]`: act as a scripted stdio
//    MCP server (scripted_server.hpp) — the tests spawn this binary for that;
//  - `mcprt_native_tests --credential-lock-holder <dir> <key> <wait ms>`: take a
//    NativeCredentialStore lock in another process (native_oauth_platform_test.cpp);
//  - otherwise: run the GoogleTest suite, with a listener that fails any test after which
//    this process still has a child process (running or zombie): every spawned server
//    must have been killed and reaped by the code under test.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "native_test_support.hpp"
#include "scripted_server.hpp"

namespace {

constexpr const char kScriptedFlag[] = "--scripted-server=";
constexpr const char kLockHolderFlag[] = "--credential-lock-holder";

class NoLeakedChildren final : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo&) override {
    auto children = mcprt::native::test::children_of_self();
    if (children.empty()) return;
    std::ostringstream out;
    for (const auto& c : children) out << " [pid " << c.pid << " " << c.comm << " state " << c.state << "]";
    // A failure raised here is charged to the test that just ended (gtest allows failures
    // from every listener event except OnTestPartResult).
    ADD_FAILURE() << "the test left " << children.size()
                  << " child process(es) behind (not killed or not reaped):" << out.str();
    // Clean up so one leak does not fail every later test.
    for (const auto& c : children) {
      ::kill(c.pid, SIGKILL);
      int status = 0;
      ::waitpid(c.pid, &status, 0);
    }
  }
};

}  // namespace

namespace mcprt::native::test {
int run_credential_lock_holder(int argc, char** argv);  // native_oauth_platform_test.cpp
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], kLockHolderFlag) == 0) {
    return mcprt::native::test::run_credential_lock_holder(argc - 2, argv + 2);
  }
  if (argc >= 2 && std::strncmp(argv[1], kScriptedFlag, sizeof kScriptedFlag - 1) == 0) {
    return mcprt::native::test::run_scripted_server(argv[1] + sizeof kScriptedFlag - 1, argc - 2,
                                                    argv + 2);
  }
  // NativeHttpClient honours the proxy variables as curl does, loopback included: a proxy
  // set in the environment of whoever runs the suite would carry every loopback test's
  // requests (and the CLIs the tests spawn inherit this environment). The proxy tests set
  // their own. Done before any thread exists (setenv/unsetenv are not thread-safe).
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                           "ALL_PROXY", "no_proxy", "NO_PROXY"}) {
    ::unsetenv(name);
  }
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new NoLeakedChildren);
  return RUN_ALL_TESTS();
}
