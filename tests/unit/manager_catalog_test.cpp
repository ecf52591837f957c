// The manager's catalogs (SPEC §15, issue 14): every server's resources, resource templates
// and prompts, listed after its tools, merged and sorted, re-listed on list_changed, kept in
// the tool cache entry, gone with the server; resources/read, prompts/get and
// completion/complete sent like tool calls; resource subscriptions that survive a
// reconnect. ManualExecutor + FakeServerFarm; time moves only when the test advances it.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace manager_catalog_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

json capabilities_with(json extra) {
  json caps = {{"tools", json::object()}};
  for (auto& [k, v] : extra.items()) caps[k] = v;
  return caps;
}

json resource(const std::string& uri) { return {{"uri", uri}, {"name", uri}}; }
json templ(const std::string& t) { return {{"uriTemplate", t}, {"name", t}}; }
json prompt(const std::string& name) {
  return {{"name", name}, {"arguments", {{{"name", "topic"}, {"required", true}}}}};
}

// What one server offers; the farm serves it on every connection.
struct Offer {
  json capabilities = capabilities_with({{"resources", {{"subscribe", true}, {"listChanged", true}}},
                                         {"prompts", {{"listChanged", true}}},
                                         {"completions", json::object()}});
  std::vector<json> resources;
  std::vector<json> templates;
  std::vector<json> prompts;
  std::vector<std::string> hold;
};

class ManagerCatalog : public ManagerTest {
 protected:
  void offer(const std::string& name, Offer o) {
    offers[name] = std::move(o);
    farm.on_connect(name, [this, name](FakeServer& s) {
      const Offer& o = offers[name];
      s.set_initialize_result({{"protocolVersion", "2025-11-25"},
                               {"capabilities", o.capabilities},
                               {"serverInfo", {{"name", name}, {"version", "1"}}}});
      s.set_tools({tool("t")});
      s.on("resources/list", [this, name](const json&) -> Result<json> {
        return json{{"resources", offers[name].resources}};
      });
      s.on("resources/templates/list", [this, name](const json&) -> Result<json> {
        return json{{"resourceTemplates", offers[name].templates}};
      });
      s.on("prompts/list", [this, name](const json&) -> Result<json> {
        return json{{"prompts", offers[name].prompts}};
      });
      s.on("resources/subscribe", [](const json&) -> Result<json> { return json::object(); });
      s.on("resources/unsubscribe", [](const json&) -> Result<json> { return json::object(); });
      s.on("resources/read", [](const json& p) -> Result<json> {
        return json{{"contents", {{{"uri", p["uri"]}, {"mimeType", "text/plain"},
                                   {"text", "body of " + p["uri"].get<std::string>()}}}}};
      });
      s.on("prompts/get", [](const json& p) -> Result<json> {
        return json{{"messages", {{{"role", "user"},
                                   {"content", {{"type", "text"},
                                                {"text", "about " + p["arguments"]["topic"].get<std::string>()}}}}}}};
      });
      s.on("completion/complete", [](const json& p) -> Result<json> {
        return json{{"completion", {{"values", {p["argument"]["value"].get<std::string>() + "1"}}}}};
      });
      for (const auto& m : o.hold) s.hold(m);
    });
  }

  McpManager& make_with_events() {
    McpManager& m = make();
    m.on_catalog_changed([this](const std::string& server, CatalogKind kind) {
      catalog_events.push_back(server + ":" + to_string(kind));
    });
    return m;
  }

  static std::vector<std::string> keys(const std::vector<CatalogEntry>& entries, const char* key) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.server + " " + e.definition->at(key).get<std::string>());
    return out;
  }

  std::map<std::string, Offer> offers;
  std::vector<std::string> catalog_events;
};

TEST_F(ManagerCatalog, ListedAfterTheTools_MergedSortedByServerThenKey_CountedAndAnnounced) {
  offer("beta", {.resources = {resource("file:///z"), resource("file:///a")},
                 .templates = {templ("notes://{name}")},
                 .prompts = {prompt("review"), prompt("explain")}});
  offer("alpha", {.resources = {resource("mem://x")}, .prompts = {prompt("zeta")}});
  make_with_events();
  start({config("beta"), config("alpha")});
  ex.run_until_idle();

  EXPECT_THAT(keys(manager->resources(), "uri"),
              ElementsAre("alpha mem://x", "beta file:///a", "beta file:///z"));
  EXPECT_THAT(keys(manager->resource_templates(), "uriTemplate"), ElementsAre("beta notes://{name}"));
  EXPECT_THAT(keys(manager->prompts(), "name"),
              ElementsAre("alpha zeta", "beta explain", "beta review"));
  EXPECT_FALSE(manager->resources()[0].from_cache);
  auto beta = manager->server_state("beta");
  ASSERT_TRUE(beta);
  EXPECT_EQ(beta->resource_count, 2u);
  EXPECT_EQ(beta->resource_template_count, 1u);
  EXPECT_EQ(beta->prompt_count, 2u);
  // One event per server and kind that changed; alpha has no templates, so none for that.
  std::sort(catalog_events.begin(), catalog_events.end());
  EXPECT_THAT(catalog_events, ElementsAre("alpha:prompts", "alpha:resources", "beta:prompts",
                                          "beta:resource templates", "beta:resources"));
}

TEST_F(ManagerCatalog, AServerWithoutTheCapabilities_IsNotAskedAndHasNone) {
  offer("plain", {.capabilities = capabilities_with(json::object()),
                  .resources = {resource("file:///never")}});
  make_with_events();
  start({config("plain")});
  ex.run_until_idle();
  EXPECT_EQ(phase("plain"), ServerPhase::connected);
  EXPECT_TRUE(manager->resources().empty());
  EXPECT_TRUE(manager->prompts().empty());
  EXPECT_TRUE(farm.latest("plain")->requests("resources/list").empty());
  EXPECT_TRUE(farm.latest("plain")->requests("prompts/list").empty());
  EXPECT_TRUE(catalog_events.empty());
}

TEST_F(ManagerCatalog, ListChanged_ReListsOnlyThatKind_AfterTheDebounce) {
  offer("docs", {.resources = {resource("file:///a")}, .prompts = {prompt("p")}});
  make_with_events();
  start({config("docs")});
  ex.run_until_idle();
  catalog_events.clear();
  FakeServer* s = farm.latest("docs");
  ASSERT_EQ(s->requests("prompts/list").size(), 1u);

  EXPECT_FALSE(manager->server_state("docs")->catalogs_refreshing);
  offers["docs"].resources.push_back(resource("file:///b"));
  s->notify("notifications/resources/list_changed");
  s->notify("notifications/resources/list_changed");  // a burst: one listing
  ex.run_until_idle();
  EXPECT_EQ(s->requests("resources/list").size(), 1u) << "waits for the debounce";
  EXPECT_TRUE(manager->server_state("docs")->catalogs_refreshing);
  ex.advance(options.list_changed_debounce);
  EXPECT_FALSE(manager->server_state("docs")->catalogs_refreshing);
  EXPECT_EQ(s->requests("resources/list").size(), 2u);
  EXPECT_EQ(s->requests("prompts/list").size(), 1u) << "prompts did not change";
  EXPECT_THAT(keys(manager->resources(), "uri"), ElementsAre("docs file:///a", "docs file:///b"));
  EXPECT_THAT(catalog_events, ElementsAre("docs:resources"));

  offers["docs"].prompts = {prompt("q")};
  s->notify("notifications/prompts/list_changed");
  ex.advance(options.list_changed_debounce);
  EXPECT_THAT(keys(manager->prompts(), "name"), ElementsAre("docs q"));
}

TEST_F(ManagerCatalog, AFailedReList_KeepsWhatTheServerHad_AndWarnsNamingIt) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  FakeServer* s = farm.latest("docs");
  s->on("resources/list", [](const json&) -> Result<json> {
    return Error::wire(-32603, "disk on fire");
  });
  s->notify("notifications/resources/list_changed");
  ex.advance(options.list_changed_debounce);
  EXPECT_THAT(keys(manager->resources(), "uri"), ElementsAre("docs file:///a"));
  EXPECT_TRUE(log.has(LogLevel::warn, "Server \"docs\": "));
  EXPECT_TRUE(log.has(LogLevel::warn, "disk on fire (listing resources)"));
}

TEST_F(ManagerCatalog, Cache_TheCatalogsAreSavedWithTheTools_AndShownBeforeTheServerAnswers) {
  offer("docs", {.resources = {resource("file:///a")}, .templates = {templ("t://{x}")},
                 .prompts = {prompt("p")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  const std::string entry = store.entries()[ToolCache::key_for("docs")];
  auto decoded = decode_cache_entry(entry, config("docs"), wall_ms);
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->catalog.resources.size(), 1u);
  EXPECT_EQ(decoded->catalog.resources[0]["uri"], "file:///a");
  EXPECT_EQ(decoded->catalog.resource_templates.size(), 1u);
  EXPECT_EQ(decoded->catalog.prompts.size(), 1u);

  // A restart: the server is slow to answer initialize.
  manager.reset();
  offers["docs"].hold = {"initialize"};
  offers["docs"].resources = {resource("file:///a"), resource("file:///new")};
  make_with_events();
  start({config("docs")});
  ex.run_until_idle();
  ASSERT_EQ(manager->resources().size(), 1u);
  EXPECT_TRUE(manager->resources()[0].from_cache);
  EXPECT_EQ(manager->prompts().size(), 1u);

  FakeServer* s = farm.latest("docs");
  s->reply(s->last_request("initialize")["id"],
           {{"protocolVersion", "2025-11-25"}, {"capabilities", offers["docs"].capabilities},
            {"serverInfo", {{"name", "docs"}, {"version", "1"}}}});
  ex.run_until_idle();
  EXPECT_THAT(keys(manager->resources(), "uri"), ElementsAre("docs file:///a", "docs file:///new"));
  EXPECT_FALSE(manager->resources()[0].from_cache);
  auto again = decode_cache_entry(store.entries()[ToolCache::key_for("docs")], config("docs"), wall_ms);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->catalog.resources.size(), 2u) << "the changed catalog is written back";
}

TEST_F(ManagerCatalog, Cache_AnUnchangedCatalogIsNotWrittenAgain) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  // Mark the entry: only a write after this point replaces the mark.
  std::string& entry = store.entries()[ToolCache::key_for("docs")];
  ASSERT_FALSE(entry.empty());
  farm.latest("docs")->notify("notifications/resources/list_changed");
  ex.advance(options.list_changed_debounce);
  const std::string before = entry;
  entry += " ";
  farm.latest("docs")->notify("notifications/resources/list_changed");
  ex.advance(options.list_changed_debounce);
  EXPECT_EQ(store.entries()[ToolCache::key_for("docs")], before + " ");
}

TEST_F(ManagerCatalog, ACorruptCatalogInTheCacheEntry_IsAMissForTheWholeEntry) {
  std::string text = encode_cache_entry(config("docs"), json::object(), tools_of({"t"}), kWallMs - 1000,
                                        CachedCatalog{{json{{"name", "no uri"}}}, {}, {}});
  EXPECT_FALSE(decode_cache_entry(text, config("docs"), kWallMs));
  text = encode_cache_entry(config("docs"), json::object(), tools_of({"t"}), kWallMs - 1000,
                            CachedCatalog{{resource("file:///a")}, {}, {prompt("p")}});
  auto ok = decode_cache_entry(text, config("docs"), kWallMs);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->catalog.prompts.size(), 1u);
  // An entry without catalogs (written before them) is a hit with none.
  auto old = decode_cache_entry(
      encode_cache_entry(config("docs"), json::object(), tools_of({"t"}), kWallMs - 1000),
      config("docs"), kWallMs);
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->catalog.resources.empty());
}

TEST_F(ManagerCatalog, ADisconnectedServerTakesItsEntriesWithIt) {
  offer("a", {.resources = {resource("file:///a")}});
  offer("b", {.resources = {resource("file:///b")}});
  make_with_events();
  start({config("a"), config("b")});
  ex.run_until_idle();
  catalog_events.clear();
  manager->disconnect_server("a");
  ex.run_until_idle();
  EXPECT_THAT(keys(manager->resources(), "uri"), ElementsAre("b file:///b"));
  EXPECT_THAT(catalog_events, ElementsAre("a:resources"));
}

TEST_F(ManagerCatalog, ServerForResource_AListedUriFirst_ThenAMatchingTemplate) {
  offer("files", {.resources = {resource("file:///etc/hosts")}, .templates = {templ("file:///{path}")}});
  offer("notes", {.templates = {templ("notes://{book}/{page}"), templ("repo://{+path}")}});
  make();
  start({config("files"), config("notes")});
  ex.run_until_idle();
  EXPECT_EQ(manager->server_for_resource("file:///etc/hosts"), "files");
  EXPECT_EQ(manager->server_for_resource("file:///readme"), "files");
  EXPECT_EQ(manager->server_for_resource("file:///a/b"), "") << "{path} takes no '/'";
  EXPECT_EQ(manager->server_for_resource("notes://rust/12"), "notes");
  EXPECT_EQ(manager->server_for_resource("notes://rust/"), "") << "a variable takes one or more";
  EXPECT_EQ(manager->server_for_resource("repo://src/main.cpp"), "notes") << "{+path} takes '/'";
  EXPECT_EQ(manager->server_for_resource("http://elsewhere"), "");
}

TEST_F(ManagerCatalog, ServerForResource_AHostileTemplateIsMatchedWithoutBacktracking) {
  // 200 variables over a 300-character URI: trying every split (as a backtracking matcher
  // would) never ends; each of these answers at once.
  std::string vars;
  for (int i = 0; i < 200; ++i) vars += "{v}";
  offer("evil", {.templates = {templ("t://" + vars + "x")}});
  offer("fine", {.templates = {templ("u://" + vars)}});
  make();
  start({config("evil"), config("fine")});
  ex.run_until_idle();
  EXPECT_EQ(manager->server_for_resource("t://" + std::string(300, 'a')), "");
  EXPECT_EQ(manager->server_for_resource("t://" + std::string(300, 'a') + "x"), "evil");
  EXPECT_EQ(manager->server_for_resource("u://" + std::string(200, 'a')), "fine");
  EXPECT_EQ(manager->server_for_resource("u://" + std::string(199, 'a')), "") << "one char each";
}

TEST_F(ManagerCatalog, ReadGetComplete_GoToTheNamedServer_AndWaitForOneStillConnecting) {
  offer("docs", {.resources = {resource("file:///a")}, .prompts = {prompt("p")},
                 .hold = {"initialize"}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  CallProbe read, got, completed;
  manager->read_resource("docs", "file:///a", CallOptions{}, read.callback());
  manager->get_prompt("docs", "p", {{"topic", "rust"}}, CallOptions{}, got.callback());
  manager->complete("docs", {{"type", "ref/prompt"}, {"name", "p"}}, "topic", "ru", nullptr,
                    CallOptions{}, completed.callback());
  ex.run_until_idle();
  EXPECT_EQ(read.done + got.done + completed.done, 0) << "they wait for the connection";
  FakeServer* s = farm.latest("docs");
  s->reply(s->last_request("initialize")["id"],
           {{"protocolVersion", "2025-11-25"}, {"capabilities", offers["docs"].capabilities},
            {"serverInfo", {{"name", "docs"}, {"version", "1"}}}});
  ex.run_until_idle();
  ASSERT_TRUE(read.result && read.result->ok());
  EXPECT_EQ(read.result->value()["contents"][0]["text"], "body of file:///a");
  ASSERT_TRUE(got.result && got.result->ok());
  EXPECT_EQ(got.result->value()["messages"][0]["content"]["text"], "about rust");
  ASSERT_TRUE(completed.result && completed.result->ok()) << completed.result->error();
  EXPECT_EQ(completed.result->value()["completion"]["values"][0], "ru1");
}

TEST_F(ManagerCatalog, ReadOnAnUnknownServer_FailsAtOnceNamingIt) {
  make();
  CallProbe read;
  manager->read_resource("ghost", "file:///a", CallOptions{}, read.callback());
  ex.run_until_idle();
  ASSERT_TRUE(read.result && !read.result->ok());
  EXPECT_EQ(read.result->error().code, ErrorCode::not_connected);
  EXPECT_THAT(read.result->error().message, HasSubstr("Server \"ghost\""));
}

TEST_F(ManagerCatalog, Subscription_DeliversUpdates_SurvivesAReconnect_AndEndsWithUnsubscribe) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs", {{"reconnect", {{"initialDelayMs", 100}}}})});
  ex.run_until_idle();
  std::vector<json> updates;
  std::optional<Status> first;
  const auto id = manager->subscribe_resource(
      "docs", "file:///a", [&](const json& p) { updates.push_back(p); },
      [&](Status st) { first = std::move(st); });
  ex.run_until_idle();
  ASSERT_TRUE(first && first->ok());
  FakeServer* s = farm.latest("docs");
  ASSERT_EQ(s->requests("resources/subscribe").size(), 1u);
  EXPECT_EQ(s->last_request("resources/subscribe")["params"]["uri"], "file:///a");
  s->notify("notifications/resources/updated", {{"uri", "file:///a"}});
  s->notify("notifications/resources/updated", {{"uri", "file:///other"}});
  ex.run_until_idle();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["uri"], "file:///a");

  // The server crashes and comes back: the new connection is subscribed again.
  s->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ex.advance(Millis(100));
  ASSERT_EQ(phase("docs"), ServerPhase::connected);
  FakeServer* again = farm.latest("docs");
  ASSERT_NE(again, s);
  EXPECT_EQ(again->requests("resources/subscribe").size(), 1u);
  // Taken again: one update says so (a change while it was down was never notified).
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[1], (json{{"uri", "file:///a"}, {"resubscribed", true}}));
  again->notify("notifications/resources/updated", {{"uri", "file:///a"}});
  ex.run_until_idle();
  ASSERT_EQ(updates.size(), 3u);
  EXPECT_EQ(updates[2], (json{{"uri", "file:///a"}}));

  manager->unsubscribe_resource(id);
  ex.run_until_idle();
  EXPECT_EQ(again->requests("resources/unsubscribe").size(), 1u);
  again->notify("notifications/resources/updated", {{"uri", "file:///a"}});
  ex.run_until_idle();
  EXPECT_EQ(updates.size(), 3u);
}

TEST_F(ManagerCatalog, Subscription_RefusedAfterAReconnect_EndsThroughOnEndedNamingServerAndUri) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs", {{"reconnect", {{"initialDelayMs", 100}}}})});
  ex.run_until_idle();
  std::vector<json> updates;
  std::optional<Status> first;
  std::vector<Error> ended;
  manager->subscribe_resource(
      "docs", "file:///a", [&](const json& p) { updates.push_back(p); },
      [&](Status st) { first = std::move(st); }, [&](const Error& e) { ended.push_back(e); });
  ex.run_until_idle();
  ASSERT_TRUE(first && first->ok());

  // The server comes back without resource subscriptions.
  offers["docs"].capabilities = capabilities_with({{"resources", json::object()}});
  farm.latest("docs")->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ex.advance(Millis(100));
  ASSERT_EQ(phase("docs"), ServerPhase::connected);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].code, ErrorCode::invalid_argument);
  EXPECT_THAT(ended[0].message, HasSubstr("Server \"docs\""));
  EXPECT_THAT(ended[0].message, HasSubstr("file:///a"));
  EXPECT_TRUE(updates.empty()) << "no resubscribed update for a subscription that ended";

  // It is gone: the next reconnect, to a server that offers subscriptions again, does not
  // send it, and on_ended does not run twice.
  offers["docs"].capabilities = Offer{}.capabilities;
  farm.latest("docs")->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ex.advance(Millis(200));
  ASSERT_EQ(phase("docs"), ServerPhase::connected);
  EXPECT_TRUE(farm.latest("docs")->requests("resources/subscribe").empty());
  EXPECT_EQ(ended.size(), 1u);
}

TEST_F(ManagerCatalog, Subscription_WhoseResubscribeFailsWithTheConnection_IsSentAgainOnTheNextOne) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs", {{"reconnect", {{"initialDelayMs", 100}}}})});
  ex.run_until_idle();
  std::vector<json> updates;
  std::vector<Error> ended;
  manager->subscribe_resource(
      "docs", "file:///a", [&](const json& p) { updates.push_back(p); }, nullptr,
      [&](const Error& e) { ended.push_back(e); });
  ex.run_until_idle();

  // The next connection dies while its resources/subscribe is unanswered.
  offers["docs"].hold = {"resources/subscribe"};
  farm.latest("docs")->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ex.advance(Millis(100));
  FakeServer* held = farm.latest("docs");
  ASSERT_EQ(held->requests("resources/subscribe").size(), 1u);
  offers["docs"].hold.clear();
  held->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  EXPECT_TRUE(ended.empty()) << "a connection that died is not a refusal";
  ex.advance(Millis(200));
  ASSERT_EQ(phase("docs"), ServerPhase::connected);
  EXPECT_EQ(farm.latest("docs")->requests("resources/subscribe").size(), 1u);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0], (json{{"uri", "file:///a"}, {"resubscribed", true}}));
  EXPECT_TRUE(ended.empty());
}

// An HTTP session that expired and was initialized again under the live connection (the
// transport's on_renewed): the new session has none of the old one's subscriptions, and a
// restarted server may list other tools.
TEST_F(ManagerCatalog, ARenewedServerSession_IsSubscribedAgain_AndItsListsAreListedAgain) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  std::vector<json> updates;
  manager->subscribe_resource("docs", "file:///a", [&](const json& p) { updates.push_back(p); });
  ex.run_until_idle();
  FakeServer* s = farm.latest("docs");
  ASSERT_EQ(s->requests("resources/subscribe").size(), 1u);
  ASSERT_EQ(s->requests("tools/list").size(), 1u);
  ASSERT_EQ(s->requests("resources/list").size(), 1u);

  offers["docs"].resources.push_back(resource("file:///b"));
  s->renew_session();
  ex.run_until_idle();
  EXPECT_EQ(s->requests("resources/subscribe").size(), 2u);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0], (json{{"uri", "file:///a"}, {"resubscribed", true}}));
  ex.advance(options.list_changed_debounce);
  EXPECT_EQ(s->requests("tools/list").size(), 2u);
  EXPECT_EQ(s->requests("resources/list").size(), 2u);
  EXPECT_THAT(keys(manager->resources(), "uri"), ElementsAre("docs file:///a", "docs file:///b"));
  EXPECT_EQ(phase("docs"), ServerPhase::connected);
  EXPECT_EQ(farm.attempts("docs"), 1u) << "the connection itself went on";
}

TEST_F(ManagerCatalog, Subscription_JoiningOneAlreadyTaken_GivesTheOtherNoResubscribedUpdate) {
  offer("docs", {.resources = {resource("file:///a")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  int first_updates = 0;
  manager->subscribe_resource("docs", "file:///a", [&](const json&) { ++first_updates; });
  ex.run_until_idle();
  std::optional<Status> second;
  manager->subscribe_resource("docs", "file:///a", [](const json&) {},
                              [&](Status st) { second = std::move(st); });
  ex.run_until_idle();
  ASSERT_TRUE(second && second->ok());
  EXPECT_EQ(farm.latest("docs")->requests("resources/subscribe").size(), 1u);
  EXPECT_EQ(first_updates, 0);
}

TEST_F(ManagerCatalog, Subscription_ToAServerWithoutSubscribe_FailsAndIsGone) {
  offer("docs", {.capabilities = capabilities_with({{"resources", json::object()}}),
                 .resources = {resource("file:///a")}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  std::optional<Status> first;
  int updates = 0;
  manager->subscribe_resource("docs", "file:///a", [&](const json&) { ++updates; },
                              [&](Status st) { first = std::move(st); });
  ex.run_until_idle();
  ASSERT_TRUE(first && !first->ok());
  EXPECT_EQ(first->error().code, ErrorCode::invalid_argument);
  EXPECT_THAT(first->error().message, HasSubstr("Server \"docs\""));
  EXPECT_TRUE(farm.latest("docs")->requests("resources/subscribe").empty());
  farm.latest("docs")->notify("notifications/resources/updated", {{"uri", "file:///a"}});
  ex.run_until_idle();
  EXPECT_EQ(updates, 0);
}

TEST_F(ManagerCatalog, Subscription_ToAServerStillConnecting_IsSentOnceItConnects) {
  offer("docs", {.resources = {resource("file:///a")}, .hold = {"initialize"}});
  make();
  start({config("docs")});
  ex.run_until_idle();
  std::optional<Status> first;
  manager->subscribe_resource("docs", "file:///a", [](const json&) {},
                              [&](Status st) { first = std::move(st); });
  ex.run_until_idle();
  EXPECT_FALSE(first);
  FakeServer* s = farm.latest("docs");
  s->hold("resources/list");
  s->reply(s->last_request("initialize")["id"],
           {{"protocolVersion", "2025-11-25"}, {"capabilities", offers["docs"].capabilities},
            {"serverInfo", {{"name", "docs"}, {"version", "1"}}}});
  ex.run_until_idle();
  EXPECT_EQ(phase("docs"), ServerPhase::connected);
  EXPECT_TRUE(manager->server_state("docs")->catalogs_refreshing) << "resources/list is held";
  ASSERT_TRUE(first && first->ok());
  EXPECT_EQ(s->requests("resources/subscribe").size(), 1u);
}

}  // namespace
}  // namespace manager_catalog_test
}  // namespace mcprt::testing
