// URL parsing, resolution and origin checks (mcprt/url.hpp), and the HttpHeaders container
// (mcprt/platform/http_client.hpp): the pieces behind the legacy endpoint check,
// redirects and headerPolicy "origin-locked".

#include <gtest/gtest.h>

#include "mcprt/platform/http_client.hpp"
#include "mcprt/url.hpp"

namespace mcprt {
namespace http_url_test {  // this file's own names in a unity batch
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
  EXPECT_FALSE(parse_http_url("http:///"));
  EXPECT_FALSE(parse_http_url("http://h:0/"));
  EXPECT_FALSE(parse_http_url("http://h:70000/"));
  EXPECT_FALSE(parse_http_url("http://h:8a/"));
  EXPECT_FALSE(parse_http_url(""));
}

// The rules below are the WHATWG URL Standard's basic URL parser for http(s); each case
// was checked against Node's URL (tests/web/url_differential.test.mjs runs the corpus).
std::string href(std::string_view text) {
  auto url = parse_http_url(text);
  return url ? url->to_string() : "(rejected)";
}
std::string host(std::string_view text) {
  auto url = parse_http_url(text);
  return url ? url->host : "(rejected)";
}
std::string reason(std::string_view text) {
  Result<Url> url = parse_http_url_checked(text);
  return url ? "(accepted)" : url.error().message;
}

TEST(UrlWhatwg, TrimsControlsAndSpacesAndRemovesTabsAndNewlinesAnywhere) {
  EXPECT_EQ(href(std::string(" \x01http://h/x \x1f", 14)), "http://h/x");
  EXPECT_EQ(href("ht\ttp://h\n.com/a\r\nb"), "http://h.com/ab");
  EXPECT_EQ(href("http://h:8\t0/"), "http://h/");
}

TEST(UrlWhatwg, BackslashIsASlashSoItEndsTheAuthority) {
  // issue 9: mcprt read the host as "evil"; fetch connects to 127.0.0.1.
  auto url = parse_http_url("http://127.0.0.1\\@evil/");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->userinfo, "");
  EXPECT_EQ(url->path, "/@evil/");
  EXPECT_EQ(href("http:\\\\h\\a\\b"), "http://h/a/b");
  EXPECT_EQ(href("http:h/x"), "http://h/x");  // a special scheme needs no slashes
  EXPECT_EQ(href("http:///h/x"), "http://h/x");
}

TEST(UrlWhatwg, UserinfoRunsToTheLastAtSignAndIsPercentEncoded) {
  auto url = parse_http_url("http://a@b:c:d@h/");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->username, "a%40b");
  EXPECT_EQ(url->password, "c%3Ad");
  EXPECT_EQ(url->userinfo, "a%40b:c%3Ad");
  EXPECT_EQ(url->host, "h");
  EXPECT_EQ(href("http://u p:\"@h/"), "http://u%20p:%22@h/");
  EXPECT_EQ(href("http://@h/"), "http://h/");
  EXPECT_EQ(href("http://:pw@h/"), "http://:pw@h/");
  EXPECT_EQ(reason("http://u:p@/"), "there is no host after the userinfo");
}

TEST(UrlWhatwg, HostIsPercentDecodedLowercasedAndChecked) {
  EXPECT_EQ(host("http://%41%42.CoM/"), "ab.com");
  EXPECT_EQ(host("http://a*b_c/"), "a*b_c");
  for (const char* bad : {"http://a%2fb/", "http://a%00b/", "http://a%25b/", "http://a b/", "http://a<b/",
                          "http://a^b/", "http://a|b/", "http://a%/"}) {
    EXPECT_FALSE(parse_http_url(bad)) << bad;
  }
  EXPECT_NE(reason("http://a|b/").find("not allowed in a host"), std::string::npos);
}

TEST(UrlWhatwg, Ipv4NumbersAreSerializedInDottedDecimal) {
  EXPECT_EQ(host("http://127.1/"), "127.0.0.1");
  EXPECT_EQ(host("http://0x7f.0.0.1/"), "127.0.0.1");
  EXPECT_EQ(host("http://0177.0.0.1/"), "127.0.0.1");
  EXPECT_EQ(host("http://2130706433/"), "127.0.0.1");
  EXPECT_EQ(host("http://0x7F000001/"), "127.0.0.1");
  EXPECT_EQ(host("http://%31%32%37.1/"), "127.0.0.1");
  EXPECT_EQ(host("http://1.2.3.4./"), "1.2.3.4");
  EXPECT_EQ(host("http://4294967295/"), "255.255.255.255");
  EXPECT_EQ(host("http://0x/"), "0.0.0.0");
  EXPECT_EQ(host("http://1.2.3.4.a/"), "1.2.3.4.a");  // does not end in a number: a domain
}

TEST(UrlWhatwg, HostsEndingInANumberThatIsNotAnIpv4AddressAreRejected) {
  for (const char* bad : {"http://4294967296/", "http://256.0.0.1/", "http://1.2.65536/", "http://1.2.3.4.5/",
                          "http://foo.1/", "http://foo.0x/", "http://09/", "http://1..2/", "http://1.2.3.09/"}) {
    EXPECT_FALSE(parse_http_url(bad)) << bad;
  }
  EXPECT_NE(reason("http://foo.1/").find("ends in a number"), std::string::npos);
}

TEST(UrlWhatwg, Ipv6IsParsedAndWrittenCompressed) {
  EXPECT_EQ(host("http://[0:0:0:0:0:0:0:1]/"), "[::1]");
  EXPECT_EQ(host("http://[FEDC:BA98:0:0:0:0:0:3210]/"), "[fedc:ba98::3210]");
  EXPECT_EQ(host("http://[1:0:0:2:0:0:0:3]/"), "[1:0:0:2::3]");  // the longest zero run
  EXPECT_EQ(host("http://[1:0:0:2:0:0:3:4]/"), "[1::2:0:0:3:4]");  // the first of equal runs
  EXPECT_EQ(host("http://[::ffff:127.0.0.1]/"), "[::ffff:7f00:1]");
  EXPECT_EQ(host("http://[0000:0000::0001]:8080/"), "[::1]");
  for (const char* bad : {"http://[::1/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[1::2::3]/", "http://[12345::]/",
                          "http://[::1.2.3]/", "http://[::01.2.3.4]/", "http://[fe80::1%25eth0]/", "http://[]/",
                          "http://[::1]x/"}) {
    EXPECT_FALSE(parse_http_url(bad)) << bad;
  }
}

TEST(UrlWhatwg, AHostOfOnlyColonsIsRejected) {
  // issue 9: "http://::" was accepted.
  EXPECT_FALSE(parse_http_url("http://::"));
  EXPECT_FALSE(parse_http_url("http://::1/"));
  EXPECT_EQ(reason("http://::"), "the host is empty");
}

TEST(UrlWhatwg, DefaultPortsAreDroppedAndPortsAreChecked) {
  EXPECT_EQ(href("http://h:80/"), "http://h/");
  EXPECT_EQ(href("https://h:443/"), "https://h/");
  EXPECT_EQ(href("http://h:443/"), "http://h:443/");
  EXPECT_EQ(href("http://h:00080/"), "http://h/");
  EXPECT_EQ(href("https://h:0000000000000000000008443/"), "https://h:8443/");
  EXPECT_EQ(href("http://h:65535/"), "http://h:65535/");
  EXPECT_EQ(href("http://h:/"), "http://h/");
  auto url = parse_http_url("http://h:80/");
  ASSERT_TRUE(url);
  EXPECT_FALSE(url->explicit_port);
  EXPECT_EQ(url->port, 80);
  EXPECT_FALSE(parse_http_url("http://h:65536/"));
  EXPECT_FALSE(parse_http_url("http://h:99999999999999999999/"));
  EXPECT_FALSE(parse_http_url("http://h:-1/"));
  // A browser accepts port 0; it is deliberately an error here.
  EXPECT_EQ(reason("http://h:0/"), "port 0 cannot be connected to");
}

TEST(UrlWhatwg, PathIsPercentEncodedAndDotSegmentsAreRemoved) {
  EXPECT_EQ(href("http://h/a b\"<>`{}|^\x7f\xc3\xa9"), "http://h/a%20b%22%3C%3E%60%7B%7D|^%7F%C3%A9");
  EXPECT_EQ(href("http://h/a/%2e/b/%2E%2e/c"), "http://h/a/c");
  EXPECT_EQ(href("http://h/a/.%2e/b"), "http://h/b");
  EXPECT_EQ(href("http://h/../../x"), "http://h/x");
  EXPECT_EQ(href("http://h/a/.."), "http://h/");
  EXPECT_EQ(href("http://h/a/."), "http://h/a/");
  EXPECT_EQ(href("http://h/.../x"), "http://h/.../x");
  EXPECT_EQ(href("http://h/a%2f..%2fb"), "http://h/a%2f..%2fb");  // encoded slashes are not separators
  EXPECT_EQ(href("http://h"), "http://h/");
}

TEST(UrlWhatwg, QueryUsesTheSpecialQueryPercentEncodeSetAndTheFragmentIsDropped) {
  auto url = parse_http_url("http://h/p?a b'c\"<>`{}#frag ment");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->query, "a%20b%27c%22%3C%3E`{}");
  EXPECT_EQ(url->to_string(), "http://h/p?a%20b%27c%22%3C%3E`{}");
  EXPECT_EQ(href("http://h/?"), "http://h/?");
  EXPECT_EQ(href("http://h/#?x"), "http://h/");
}

TEST(UrlWhatwg, NonAsciiHostsAreRejectedUnlessWrittenInPunycode) {
  EXPECT_NE(reason("http://b\xc3\xbc" "cher.de/").find("is not ASCII"), std::string::npos);
  EXPECT_NE(reason("http://%C3%BC.de/").find("is not ASCII"), std::string::npos);
  EXPECT_NE(reason("http://example\xe3\x80\x82" "com/").find("is not ASCII"), std::string::npos);  // U+3002
  EXPECT_EQ(host("http://XN--BCHER-KVA.de/"), "xn--bcher-kva.de");
  EXPECT_EQ(host("http://xn--fsqu00a.xn--0zwm56d/"), "xn--fsqu00a.xn--0zwm56d");
  EXPECT_EQ(host("http://xn--e1afmkfd.xn--p1ai/"), "xn--e1afmkfd.xn--p1ai");
  EXPECT_NE(reason("http://xn--/").find("not valid punycode"), std::string::npos);
  EXPECT_NE(reason("http://xn--a/").find("punycode"), std::string::npos);
  EXPECT_NE(reason("http://xn--ls8h.la/").find("without IDNA tables"), std::string::npos);  // an emoji
}

TEST(UrlWhatwg, InputThatIsNotUtf8IsRejected) {
  EXPECT_EQ(reason("http://h/\xff"), "it is not valid UTF-8");
}

TEST(UrlWhatwg, ReferencesResolveAsInABrowser) {
  const std::string base = "http://u:p@h:8080/a/b/c?q";
  EXPECT_EQ(resolve_url(base, ""), "http://u:p@h:8080/a/b/c?q");
  EXPECT_EQ(resolve_url(base, "d"), "http://u:p@h:8080/a/b/d");
  EXPECT_EQ(resolve_url(base, "../../../../d"), "http://u:p@h:8080/d");
  EXPECT_EQ(resolve_url(base, "\\d"), "http://u:p@h:8080/d");
  EXPECT_EQ(resolve_url(base, "..\\d"), "http://u:p@h:8080/a/d");
  EXPECT_EQ(resolve_url(base, "%2e%2e/x"), "http://u:p@h:8080/a/x");
  EXPECT_EQ(resolve_url(base, "#f"), "http://u:p@h:8080/a/b/c?q");
  EXPECT_EQ(resolve_url(base, "?"), "http://u:p@h:8080/a/b/c?");
  // The base's userinfo never goes to another authority.
  EXPECT_EQ(resolve_url(base, "//other/d"), "http://other/d");
  EXPECT_EQ(resolve_url(base, "\\\\other\\d"), "http://other/d");
  EXPECT_EQ(resolve_url(base, "///other"), "http://other/");
  // A reference with the base's scheme and no "//" is relative; another scheme is not.
  EXPECT_EQ(resolve_url(base, "http:d"), "http://u:p@h:8080/a/b/d");
  EXPECT_EQ(resolve_url(base, "http:/d"), "http://u:p@h:8080/d");
  EXPECT_EQ(resolve_url(base, "https:d"), "https://d/");
  EXPECT_EQ(resolve_url(base, "//h\\@evil/"), "http://h/@evil/");
  EXPECT_FALSE(resolve_url(base, "//::/x"));
  EXPECT_FALSE(resolve_url(base, "ws://h/"));
}

TEST(UrlWhatwg, OriginsCompareTheSerializedHost) {
  EXPECT_TRUE(same_origin("http://127.1/", "http://0x7f.0.0.1:80/x"));
  EXPECT_TRUE(same_origin("http://[0:0::1]/", "http://[::1]/"));
  EXPECT_TRUE(same_origin("http://%41.com/", "http://a.com/"));
  EXPECT_FALSE(same_origin("http://127.0.0.1\\@evil/", "http://evil/"));
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

TEST(HttpHeaders, AddReturnsTheFieldItAppended) {
  HttpHeaders h;
  h.reserve(2);
  HttpHeader& first = h.add("X-A", "1");
  first.value += "2";  // a reader continuing a folded value
  h.add("X-B", "3").value += "4";
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.get("x-a"), "12");
  EXPECT_EQ(h.get("x-b"), "34");
}

TEST(HttpHeaders, NamesMatchIgnoringAsciiCaseOnly) {
  EXPECT_TRUE(iequals("Content-Type", "content-TYPE"));
  EXPECT_FALSE(iequals("Content-Type", "Content-Typf"));
  EXPECT_FALSE(iequals("Content-Type", "Content-Typ"));
  EXPECT_FALSE(iequals("a[", "A{")) << "only A-Z fold: '[' and '{' differ by the case bit";
  EXPECT_FALSE(iequals("x-1", "X-2"));
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
}  // namespace http_url_test
}  // namespace mcprt
