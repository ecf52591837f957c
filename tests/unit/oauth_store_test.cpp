// MemoryCredentialStore (mcprt/memory_store.hpp) and RedirectFollowingAuthorizer
// (mcprt/oauth.hpp).

#include <gmock/gmock.h>

#include <memory>

#include "mcprt/memory_store.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt::testing {
namespace oauth_store_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;

using LockResult = Result<std::unique_ptr<CredentialLock>>;

TEST(MemoryCredentialStore, KeyValueLikeTheMemoryStore) {
  ManualExecutor ex;
  MemoryCredentialStore store(ex);
  std::optional<Result<std::optional<std::string>>> got;
  store.put("k", "v", [](Status s) { EXPECT_TRUE(s.ok()); });
  store.get("k", [&](Result<std::optional<std::string>> r) { got = std::move(r); });
  EXPECT_FALSE(got);  // never inside the call
  ex.run_until_idle();
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ(*got->value(), "v");
  store.remove("k", [](Status s) { EXPECT_TRUE(s.ok()); });
  ex.run_until_idle();
  EXPECT_TRUE(store.entries().empty());
}

TEST(MemoryCredentialStore, Lock_FifoPerKeyAndOtherKeysIndependent) {
  ManualExecutor ex;
  MemoryCredentialStore store(ex);
  std::vector<std::string> order;
  std::unique_ptr<CredentialLock> a, b, c, other;
  store.lock("k", Millis(1000), [&](LockResult r) { order.push_back("a"); a = std::move(r).value(); });
  store.lock("k", Millis(1000), [&](LockResult r) { order.push_back("b"); b = std::move(r).value(); });
  store.lock("k", Millis(1000), [&](LockResult r) { order.push_back("c"); c = std::move(r).value(); });
  store.lock("j", Millis(1000), [&](LockResult r) { order.push_back("j"); other = std::move(r).value(); });
  ex.run_until_idle();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "j"}));
  EXPECT_TRUE(store.locked("k"));
  a.reset();
  ex.run_until_idle();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "j", "b"}));
  b.reset();
  ex.run_until_idle();
  EXPECT_EQ(order.back(), "c");
  c.reset();
  ex.run_until_idle();
  EXPECT_FALSE(store.locked("k"));
  EXPECT_TRUE(store.locked("j"));
  EXPECT_EQ(store.locks_granted(), 4);
}

TEST(MemoryCredentialStore, Lock_WaiterTimesOutAndLeavesTheQueue) {
  ManualExecutor ex;
  MemoryCredentialStore store(ex);
  std::unique_ptr<CredentialLock> held;
  std::optional<LockResult> waited;
  bool third = false;
  store.lock("k", Millis(1000), [&](LockResult r) { held = std::move(r).value(); });
  store.lock("k", Millis(500), [&](LockResult r) { waited = std::move(r); });
  store.lock("k", Millis(5000), [&](LockResult r) { third = r.ok(); });
  ex.run_until_idle();
  ex.advance(Millis(499));
  EXPECT_FALSE(waited);
  ex.advance(Millis(1));
  ASSERT_TRUE(waited);
  ASSERT_FALSE(waited->ok());
  EXPECT_EQ(waited->error().code, ErrorCode::timeout);
  EXPECT_THAT(waited->error().message, HasSubstr("500 ms"));
  held.reset();
  ex.run_until_idle();
  EXPECT_TRUE(third);  // the timed-out waiter did not take its turn
}

TEST(MemoryCredentialStore, DestroyedWithWaitersRunsNoCallbackAndLocksStayInert) {
  ManualExecutor ex;
  auto store = std::make_unique<MemoryCredentialStore>(ex);
  std::unique_ptr<CredentialLock> held;
  bool waiter_ran = false;
  store->lock("k", Millis(1000), [&](LockResult r) { held = std::move(r).value(); });
  ex.run_until_idle();
  store->lock("k", Millis(1000), [&](LockResult) { waiter_ran = true; });
  store->lock("n", Millis(1000), [&](LockResult) { waiter_ran = true; });  // grant posted
  store.reset();
  ex.run_until_idle();
  ex.advance(Millis(5000));
  EXPECT_FALSE(waiter_ran);
  held.reset();  // releasing after the store died does nothing
  ex.run_until_idle();
  EXPECT_EQ(ex.pending_timers(), 0u);
}

TEST(RedirectFollowingAuthorizer, GetsTheUrlAndAnswersWithTheResolvedLocation) {
  ManualExecutor ex;
  FakeHttpClient http(ex);
  RedirectFollowingAuthorizer authorizer(ex, http, "http://127.0.0.1:7/cb");
  auto flow = authorizer.begin({});
  ASSERT_TRUE(flow.ok());
  EXPECT_EQ((*flow)->redirect_uri(), "http://127.0.0.1:7/cb");
  std::optional<Result<std::string>> got;
  (*flow)->authorize("https://as.example.com/authorize?x=1",
                     [&](Result<std::string> r) { got = std::move(r); });
  ex.run_until_idle();
  auto req = http.take();
  ASSERT_TRUE(req);
  EXPECT_EQ(req->method(), "GET");
  EXPECT_EQ(req->url(), "https://as.example.com/authorize?x=1");
  EXPECT_FALSE(req->request().follow_redirects);
  EXPECT_FALSE(req->has_header("Authorization"));
  req->respond(302, "", {{"Location", "/done?code=c&state=s"}});
  ex.run_until_idle();
  ASSERT_TRUE(got && got->ok()) << (got ? ::testing::PrintToString(*got) : "");
  EXPECT_EQ(got->value(), "https://as.example.com/done?code=c&state=s");
  EXPECT_EQ(authorizer.flows_begun(), 1);
}

TEST(RedirectFollowingAuthorizer, NoRedirectIsAnErrorNamingTheOrigin) {
  ManualExecutor ex;
  FakeHttpClient http(ex);
  RedirectFollowingAuthorizer authorizer(ex, http);
  auto flow = authorizer.begin({});
  std::optional<Result<std::string>> got;
  (*flow)->authorize("https://as.example.com/authorize?secret_state=1",
                     [&](Result<std::string> r) { got = std::move(r); });
  ex.run_until_idle();
  http.take()->respond(200, "<html>login</html>");
  ex.run_until_idle();
  ASSERT_TRUE(got && !got->ok());
  EXPECT_THAT(got->error().message, HasSubstr("https://as.example.com answered HTTP 200"));
}

TEST(RedirectFollowingAuthorizer, DestroyingTheFlowAbortsTheRequest) {
  ManualExecutor ex;
  FakeHttpClient http(ex);
  RedirectFollowingAuthorizer authorizer(ex, http);
  auto flow = std::move(authorizer.begin({})).value();
  bool ran = false;
  flow->authorize("https://as.example.com/authorize", [&](Result<std::string>) { ran = true; });
  ex.run_until_idle();
  auto req = http.take();
  flow.reset();
  EXPECT_TRUE(req->aborted());
  req->respond(302, "", {{"Location", "http://127.0.0.1/cb"}});
  ex.run_until_idle();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace oauth_store_test
}  // namespace mcprt::testing
