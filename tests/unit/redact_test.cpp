// Secret redaction (mcprt/redact.hpp, SPEC §17) and its use where errors are made.

#include <gtest/gtest.h>

#include "mcprt/redact.hpp"
#include "mcprt/result.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {
namespace redact_test {  // this file's own names in a unity batch
namespace {

TEST(RedactUrl, MasksUserinfoAndSecretQueryValues) {
  EXPECT_EQ(redact_url("http://alice:PW@h/x?api_key=K&q=1"), "http://***@h/x?api_key=***&q=1");
}

TEST(RedactUrl, LeavesUrlsWithoutSecretsUnchanged) {
  for (const char* url : {"http://h/x?q=1&page=2", "https://example.com:8443/mcp", "http://[::1]:3001/sse",
                          "http://h/a@b", "not a url", ""}) {
    EXPECT_EQ(redact_url(url), url);
  }
}

TEST(RedactUrl, MasksEverySecretLookingParameterNameCaseInsensitively) {
  EXPECT_EQ(redact_url("https://h/?ApiKey=1&TOKEN=2&client_secret=3&Password=4&authz=5&X-Amz-Signature=6"),
            "https://h/?ApiKey=***&TOKEN=***&client_secret=***&Password=***&authz=***&X-Amz-Signature=***");
  EXPECT_EQ(redact_url("https://h/?access_token=a;key=b"), "https://h/?access_token=***;key=***");
  // Names are compared after percent-decoding: api%5Fkey is api_key.
  EXPECT_EQ(redact_url("https://h/?api%5Fkey=s"), "https://h/?api%5Fkey=***");
}

TEST(RedactUrl, AQuestionMarkInsideAValueDoesNotEndIt) {
  // Found by fuzz_url: a server splits the query on '&' only, so "?a" is the token's value.
  EXPECT_EQ(redact_url("http://h/p?a&access_token=?a&&b"), "http://h/p?a&access_token=***&&b");
}

TEST(RedactUrl, MasksTheUserinfoOfUrlsNestedInThePathOrQuery) {
  EXPECT_EQ(redact_url("https://proxy/fetch/http://u:pw@x/y?next=https://a:b@c/&k=1"),
            "https://proxy/fetch/http://***@x/y?next=https://***@c/&k=1");
  EXPECT_EQ(redact_url("http://h/a@b://c"), "http://h/a@b://c");
  EXPECT_EQ(redact_url("http://h://u:pw@x/"), "http://h://***@x/");
  // Found by fuzz_url: a nested URL's own secret parameters.
  EXPECT_EQ(redact_url("http://h/?next=https://x/cb?api_key=k&z=1"), "http://h/?next=https://x/cb?api_key=***&z=1");
}

TEST(RedactUrl, MasksSecretsInTheFragmentToo) {
  EXPECT_EQ(redact_url("https://h/cb#access_token=abc&state=1"), "https://h/cb#access_token=***&state=1");
}

TEST(RedactUrl, UserinfoEndsAtTheLastAtSignOfTheAuthority) {
  EXPECT_EQ(redact_url("http://a@b:p@ss@h:8080/x"), "http://***@h:8080/x");
  EXPECT_EQ(redact_url("http://:secret@h/"), "http://***@h/");
  // A backslash ends the authority for a browser but not for RFC 3986: mask both readings.
  EXPECT_EQ(redact_url("http://u\\p:w@h/"), "http://***@h/");
  // An '@' in the path is not userinfo.
  EXPECT_EQ(redact_url("http://h/u:p@x"), "http://h/u:p@x");
}

TEST(RedactUrl, CoversTheFormsABrowserReadsAsUserinfo) {
  EXPECT_EQ(redact_url("http:alice:pw@h/"), "http:***@h/");
  EXPECT_EQ(redact_url("HTTP:\\\\alice:pw@h/"), "HTTP:\\\\***@h/");
  EXPECT_EQ(redact_url("ht\ttp://alice:pw@h/"), "ht\ttp://***@h/");
  EXPECT_EQ(redact_url("//alice:pw@h/"), "//***@h/");
  EXPECT_EQ(redact_url("wss://alice:pw@h/"), "wss://***@h/");
}

TEST(RedactUrl, IsIdempotent) {
  const std::string once = redact_url("http://alice:PW@h/x?api_key=K&q=1");
  EXPECT_EQ(redact_url(once), once);
}

// Found by fuzz_url: a character of a userinfo that ends the search for a later '@' ('=',
// ';', a non-ASCII byte) is gone once the userinfo is masked, so a second pass masked up to
// the next '@'. One call now gives what a second would.
TEST(RedactSecrets, IsIdempotentWhenMaskingAUserinfoUncoversALaterAt) {
  for (const std::string& text : {std::string("https://a_uri=http%3A@2F':1F127.0.0.1%3A33@2F%2F12m/mcp/"),
                                 std::string("https://a_uri=h\xF4tp%4A@2F':1F127.0.0.1%3A33@2F%2F12m/mcp/"),
                                 std::string("see http://a@b\xF4" "c@d':e@f/x")}) {
    const std::string once = redact_secrets(text);
    EXPECT_EQ(redact_secrets(once), once) << text;
    std::string in_place = text;
    EXPECT_TRUE(redact_secrets_in_place(in_place));
    EXPECT_EQ(in_place, once);
  }
  EXPECT_EQ(redact_secrets("https://a_uri=http%3A@2F':1F127.0.0.1%3A33@2F%2F12m/mcp/"), "https://***@2F%2F12m/mcp/");
  EXPECT_EQ(redact_secrets("see http://a;b=c@d':e@f/x"), "see http://***@f/x");
  EXPECT_EQ(redact_secrets("see http://a@b\xF4" "c@d':e@f/x"), "see http://***@f/x");
}

// Found by fuzz_url in a 200 s run: each masked userinfo uncovered the next '@', one more
// per pass, so a chain longer than the passes redaction repeats (4) was still not what a
// second call gives. The mask's '@' is now followed within the one pass.
TEST(RedactSecrets, OnePassFollowsAChainOfUserinfosOfAnyLength) {
  std::string text = "see https://u=v";
  for (int i = 0; i < 12; ++i) text += "\xD0%3A@2F':1L1%3A@2F%2p";
  text += "/x and more";
  const std::string once = redact_secrets(text);
  EXPECT_EQ(once, "see https://***@2F%2p/x and more");
  EXPECT_EQ(redact_secrets(once), once);
}

TEST(RedactSecrets, MasksEveryUrlInFreeText) {
  EXPECT_EQ(redact_secrets("Server \"s\": connecting to http://alice:PW@h/x?api_key=K failed; "
                           "retrying https://bob:pw2@other/y."),
            "Server \"s\": connecting to http://***@h/x?api_key=*** failed; retrying https://***@other/y.");
}

TEST(RedactSecrets, UrlsEndAtQuotesAndKeepTrailingPunctuation) {
  EXPECT_EQ(redact_secrets("url \"http://u:p@h/?token=t\" (see http://h/?key=k)."),
            "url \"http://***@h/?token=***\" (see http://h/?key=***).");
  EXPECT_EQ(redact_secrets("{\\\"url\\\":\\\"http://u:p@h/\\\"}"), "{\\\"url\\\":\\\"http://***@h/\\\"}");
}

TEST(RedactSecrets, AQuoteInTheUserinfoDoesNotEndTheUrl) {
  // Found by fuzz_url: a browser leaves "'" unescaped in userinfo.
  EXPECT_EQ(redact_secrets("HTTP 500 from http://u:it's@h/a: failed"), "HTTP 500 from http://***@h/a: failed");
  EXPECT_EQ(redact_secrets("see 'http://h/a' and 'x@y'"), "see 'http://h/a' and 'x@y'");
}

TEST(RedactSecrets, ABacktickInsideAQueryDoesNotEndTheUrl) {
  // Found by fuzz_url: a browser sends '`' unescaped in a query.
  EXPECT_EQ(redact_secrets("from http://h/?a`b&password=pw: failed"), "from http://h/?a`b&password=***: failed");
  EXPECT_EQ(redact_secrets("run `http://h/?key=k`"), "run `http://h/?key=***`");
}

TEST(RedactSecrets, PunctuationThatIsAllOfASecretValueIsMaskedWithIt) {
  EXPECT_EQ(redact_secrets("from http://h/?token=:]: failed"), "from http://h/?token=*** failed");
  EXPECT_EQ(redact_secrets("see http://h/?token=abc."), "see http://h/?token=***.");
}

TEST(RedactSecrets, MasksSecretKeyValuePairs) {
  EXPECT_EQ(redact_secrets("EXA_API_KEY=abc123 and mode=fast"), "EXA_API_KEY=*** and mode=fast");
  EXPECT_EQ(redact_secrets("token='a b c', next"), "token='***', next");
  EXPECT_EQ(redact_secrets("secret=\"x y\""), "secret=\"***\"");
}

// A quote that never closes does not swallow the rest of the message (fuzz_url: a path
// segment "access_token=':x" inside an error sentence ate the sentence's end).
TEST(RedactSecrets, AnUnclosedQuoteEndsTheValueWhereAnUnquotedOneWould) {
  EXPECT_EQ(redact_secrets("from https://h/a':b/access_token=':1F1 (upstream failed)"),
            "from https://h/a':b/access_token='*** (upstream failed)");
  EXPECT_EQ(redact_secrets("token=\"abc, then more"), "token=\"***, then more");
  EXPECT_EQ(redact_secrets(redact_secrets("password='x y")), "password='*** y");
}

TEST(RedactSecrets, MasksSecretJsonStringFields) {
  EXPECT_EQ(redact_secrets(R"({"name":"s","apiKey": "abc","headers":{"Authorization":"Bearer t"}})"),
            R"({"name":"s","apiKey": "***","headers":{"Authorization":"***"}})");
  // A secret-named field whose value is not a string is left alone.
  EXPECT_EQ(redact_secrets(R"({"api_key":{"type":"string"}})"), R"({"api_key":{"type":"string"}})");
}

TEST(RedactSecrets, MasksBearerTokensAndAuthorizationCredentials) {
  EXPECT_EQ(redact_secrets("sent Authorization: Bearer eyJhbGciOi.x-y_z= to h"),
            "sent Authorization: Bearer *** to h");
  EXPECT_EQ(redact_secrets("bearer abc"), "bearer ***");
  EXPECT_EQ(redact_secrets("Authorization: Basic YWxpY2U6cHc="), "Authorization: Basic ***");
  EXPECT_EQ(redact_secrets("Proxy-Authorization: s3cr3t"), "Proxy-Authorization: ***");
  // "Bearer" inside a word is not the scheme.
  EXPECT_EQ(redact_secrets("Gbearer x"), "Gbearer x");
}

TEST(RedactSecrets, LeavesOrdinaryMessagesUnchanged) {
  for (const char* text :
       {"Request tools/list timed out after 30000 ms", "Server \"a.b\": exited with code 1; stderr: boom",
        "HTTP 404 from http://127.0.0.1:8080/mcp", "C:\\path\\file", "x=1 y=2", "a: b", ""}) {
    EXPECT_EQ(redact_secrets(text), text);
  }
}

TEST(RedactSecrets, IsIdempotent) {
  const std::string once =
      redact_secrets("http://u:p@h/?key=k Bearer t token=v \"secret\":\"s\" Authorization: Basic c");
  EXPECT_EQ(once, "http://***@h/?key=*** Bearer *** token=*** \"secret\":\"***\" Authorization: Basic ***");
  EXPECT_EQ(redact_secrets(once), once);
}

TEST(RedactSecrets, InPlaceReportsWhetherItMasked) {
  std::string clean = "nothing here";
  EXPECT_FALSE(redact_secrets_in_place(clean));
  EXPECT_EQ(clean, "nothing here");
  std::string dirty = "see http://u:p@h/";
  EXPECT_TRUE(redact_secrets_in_place(dirty));
  EXPECT_EQ(dirty, "see http://***@h/");
}

TEST(ErrorRedaction, ErrorMessagesNeverHoldSecrets) {
  const Error local = Error::make(ErrorCode::transport, "connect to http://alice:PW@h/x?api_key=K failed");
  EXPECT_EQ(local.message, "connect to http://***@h/x?api_key=*** failed");
  EXPECT_EQ(local.describe(), "transport: connect to http://***@h/x?api_key=*** failed");
  const Error wire = Error::wire(-32000, "bad token=abc");
  EXPECT_EQ(wire.message, "bad token=***");
  EXPECT_EQ(wire.wire_code, -32000);
}

TEST(ErrorRedaction, TopLevelStringsOfTheDataAreMaskedToo) {
  const Error e = Error::make(ErrorCode::http_status, "HTTP 302",
                              json{{"status", 302}, {"url", "https://u:p@h/?sig=s"}, {"deep", {{"token", "x"}}}});
  EXPECT_EQ(e.data["url"], "https://***@h/?sig=***");
  EXPECT_EQ(e.data["status"], 302);
  EXPECT_EQ(e.data["deep"]["token"], "x");  // a peer's nested data is left as sent
  EXPECT_EQ(Error::wire(-1, "m", "see token=t").data, "see token=***");
}

TEST(ErrorRedaction, TheModelNeverReadsASecretInAnMcpErrorResult) {
  // A message rewritten after Error::make (as callers prefix server names) is masked too.
  Error e = Error::make(ErrorCode::transport, "failed");
  e.message = "Server \"s\": POST https://bob:pw@h/mcp?token=t failed";
  const ToolResult out = mcp_error_result(e);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.text, "MCP error: Server \"s\": POST https://***@h/mcp?token=*** failed");
  EXPECT_EQ(out.content[0]["text"], out.text);
}

}  // namespace
}  // namespace redact_test
}  // namespace mcprt
