// URL parsing, resolution and origin checks (mcprt/url.hpp), and the HttpHeaders container
// (mcprt/platform/http_client.hpp): the pieces behind the legacy endpoint check,
// redirects and headerPolicy "origin-locked".

#include <gtest/gtest.h>

#include "mcprt/platform/http_client.hpp"
#include "mcprt/url.hpp"

namespace mcprt {
namespace {

TEST(Url, ParsesSchemeHostPortPathAndQuery) {
  auto url = parse_http_url("HTTP://Example.COM:8080/a/b?x=1#frag");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "example.com");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->path, "/a/b");
  EXPECT_EQ(url->query, "x=1");
  EXPECT_EQ(url->to_string(), "http://example.com:8080/a/b?x=1");
  EXPECT_EQ(url->origin(), "http://example.com:8080");
}

TEST(Url, UsesTheSchemeDefaultPortAndRootPath) {
  auto http = parse_http_url("http://h");
  auto https = parse_http_url("https://h");
  ASSERT_TRUE(http && https);
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(http->path, "/");
  EXPECT_EQ(https->origin(), "https://h");
}

TEST(Url, KeepsIpv6LiteralsWithTheirPort) {
  auto url = parse_http_url("http://[::1]:3001/mcp");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "[::1]");
  EXPECT_EQ(url->port, 3001);
}

TEST(Url, RejectsWhatIsNotAnAbsoluteHttpUrl) {
  EXPECT_FALSE(parse_http_url("ftp://h/x"));
  EXPECT_FALSE(parse_http_url("/relative"));
  EXPECT_FALSE(parse_http_url("http:///nohost"));
  EXPECT_FALSE(parse_http_url("http://h:0/"));
  EXPECT_FALSE(parse_http_url("http://h:70000/"));
  EXPECT_FALSE(parse_http_url("http://h:8a/"));
  EXPECT_FALSE(parse_http_url("http://h/a b"));
  EXPECT_FALSE(parse_http_url(""));
}

TEST(Url, ResolvesTheLegacyEndpointAgainstTheStreamUrl) {
  EXPECT_EQ(resolve_url("http://127.0.0.1:3001/sse", "/message?sessionId=abc"),
            "http://127.0.0.1:3001/message?sessionId=abc");
  EXPECT_EQ(resolve_url("http://h/api/sse", "message?s=1"), "http://h/api/message?s=1");
  EXPECT_EQ(resolve_url("http://h/a/b/sse", "../x"), "http://h/a/x");
  EXPECT_EQ(resolve_url("http://h/a/sse?x=1", "?y=2"), "http://h/a/sse?y=2");
  EXPECT_EQ(resolve_url("https://h/sse", "//other:9/m"), "https://other:9/m");
  EXPECT_EQ(resolve_url("http://h/sse", "http://elsewhere/m"), "http://elsewhere/m");
  EXPECT_EQ(resolve_url("http://h/sse", "/a/./b/../c"), "http://h/a/c");
}

TEST(Url, ResolveRejectsNonHttpResults) {
  EXPECT_FALSE(resolve_url("http://h/sse", "javascript:alert(1)"));
  EXPECT_FALSE(resolve_url("not a url", "/x"));
}

TEST(Url, SameOriginComparesSchemeHostAndEffectivePort) {
  EXPECT_TRUE(same_origin("http://h/a", "http://H:80/b?c"));
  EXPECT_TRUE(same_origin("https://h:443/", "https://h/x"));
  EXPECT_FALSE(same_origin("http://h/", "https://h/"));
  EXPECT_FALSE(same_origin("http://h:8080/", "http://h:8081/"));
  EXPECT_FALSE(same_origin("http://h/", "http://h.evil/"));
  EXPECT_FALSE(same_origin("http://h/", "garbage"));
}

TEST(HttpHeaders, LooksUpNamesCaseInsensitivelyAndKeepsOrder) {
  HttpHeaders h;
  h.add("X-One", "1");
  h.add("Content-Type", "application/json");
  h.add("x-one", "again");
  EXPECT_EQ(h.get("content-type"), "application/json");
  EXPECT_EQ(h.get("X-ONE"), "1");  // the first match
  EXPECT_EQ(h.get("missing"), "");
  EXPECT_FALSE(h.has("missing"));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h.entries()[2].value, "again");
}

TEST(HttpHeaders, SetReplacesEveryFieldOfThatName) {
  HttpHeaders h{{"Accept", "a"}, {"accept", "b"}, {"Other", "o"}};
  h.set("ACCEPT", "c");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.entries()[0].name, "Other");
  EXPECT_EQ(h.get("accept"), "c");
}

TEST(HttpClientSeam, CorsErrorIsATransportErrorThatNamesTheFix) {
  Error e = make_cors_error("https://srv/mcp");
  EXPECT_EQ(e.code, ErrorCode::transport);
  EXPECT_EQ(e.data.value("cors", false), true);
  EXPECT_NE(e.message.find("CORS"), std::string::npos);
  EXPECT_NE(e.message.find("https://srv/mcp"), std::string::npos);
  EXPECT_NE(e.message.find("Access-Control-Expose-Headers: mcp-session-id"), std::string::npos);
  EXPECT_NE(e.message.find("mcp-protocol-version"), std::string::npos);
}

}  // namespace
}  // namespace mcprt
