#include "server/request_guard.h"

#include <gtest/gtest.h>

namespace stepscope::server {
namespace {

constexpr const char* kToken = "0123456789abcdef0123";

RequestCredentials Get(const std::string& host = "127.0.0.1:8421") {
  RequestCredentials request;
  request.method = "GET";
  request.host = host;
  return request;
}

TEST(RequestGuardTest, LoopbackWithoutTokenAllowsLoopbackHostsOnly) {
  const AccessPolicy policy{"", true};
  EXPECT_EQ(CheckRequest(policy, Get()).http_status, 200);
  EXPECT_EQ(CheckRequest(policy, Get("localhost:8421")).http_status, 200);
  EXPECT_EQ(CheckRequest(policy, Get("[::1]:8421")).http_status, 200);
  // A DNS name rebound to 127.0.0.1 by another site's page.
  const GuardVerdict rebound = CheckRequest(policy, Get("evil.example:8421"));
  EXPECT_EQ(rebound.http_status, 403);
  EXPECT_NE(rebound.error.find("evil.example"), std::string::npos);
}

TEST(RequestGuardTest, TokenIsRequiredOnEveryRequestWhenSet) {
  const AccessPolicy policy{kToken, false};
  RequestCredentials request = Get("10.0.0.5:8421");
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);

  request.authorization = std::string("Bearer ") + kToken;
  EXPECT_EQ(CheckRequest(policy, request).http_status, 200);
  request.authorization = "Bearer 0123456789abcdef0124";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);
  request.authorization = std::string("Basic ") + kToken;
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);

  request.authorization.clear();
  request.cookie = std::string("theme=dark; stepscope_token=") + kToken + "; other=1";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 200);
  request.cookie = "stepscope_token=";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);

  request.cookie.clear();
  request.query_token = kToken;
  const GuardVerdict by_query = CheckRequest(policy, request);
  EXPECT_EQ(by_query.http_status, 200);
  EXPECT_TRUE(by_query.token_from_query);
  request.query_token = std::string(kToken).substr(0, 10);
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);
}

TEST(RequestGuardTest, PostFromAnotherOriginIsForbiddenEvenWithTheToken) {
  const AccessPolicy policy{kToken, false};
  RequestCredentials request = Get("10.0.0.5:8421");
  request.method = "POST";
  request.cookie = std::string("stepscope_token=") + kToken;
  request.origin = "http://10.0.0.5:8421";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 200);
  request.origin = "https://evil.example";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 403);
  request.origin = "http://10.0.0.5:8422";
  EXPECT_EQ(CheckRequest(policy, request).http_status, 403);
  request.origin.clear();  // a script (curl, urllib) sends none; the token still decides
  EXPECT_EQ(CheckRequest(policy, request).http_status, 200);
  request.cookie.clear();
  EXPECT_EQ(CheckRequest(policy, request).http_status, 401);
  // A GET's Origin does not matter: it changes nothing.
  RequestCredentials get = Get("10.0.0.5:8421");
  get.origin = "https://evil.example";
  get.authorization = std::string("Bearer ") + kToken;
  EXPECT_EQ(CheckRequest(policy, get).http_status, 200);
}

TEST(RequestGuardTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.2"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("10.1.2.3"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.evil.example"));
  EXPECT_EQ(HostWithoutPort("127.0.0.1:8421"), "127.0.0.1");
  EXPECT_EQ(HostWithoutPort("[::1]:8421"), "::1");
  EXPECT_EQ(HostWithoutPort("localhost"), "localhost");
}

TEST(RequestGuardTest, GeneratedTokensAreLongFreshAndValid) {
  auto a = GenerateToken();
  auto b = GenerateToken();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(ValidateToken(*a).ok());
  EXPECT_FALSE(ValidateToken("short").ok());
  EXPECT_FALSE(ValidateToken("0123456789abcdef; Path=/").ok());
  EXPECT_FALSE(ValidateToken(std::string(257, 'a')).ok());
  EXPECT_EQ(TokenCookieHeader("t"), "stepscope_token=t; HttpOnly; SameSite=Strict; Path=/");
}

}  // namespace
}  // namespace stepscope::server
