// Who may use the dashboard server, decided per request before any handler runs (docs/dashboard.md
// "Security model"):
// - a server bound to a loopback address needs no token unless one was given, but answers only
//   requests whose Host names a loopback address, so a web page cannot reach it through a DNS
//   name rebound to 127.0.0.1;
// - any other bind requires the token: `Authorization: Bearer T`, the HttpOnly cookie the page
//   shell sets, or `?token=T` (how the printed URL carries it) — else 401;
// - a request that changes things (POST) carrying an Origin must come from the server's own
//   origin — else 403, so another site's page cannot drive it with the user's cookie.
//
// Callers: dashboard_server.cc (every request), `stepscope serve` (token validation, generation).
// Pure functions except GenerateToken (reads the kernel's CSPRNG); thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace stepscope::server {

// The cookie that carries the token after the page was opened as /?token=T.
inline constexpr const char* kTokenCookie = "stepscope_token";

struct AccessPolicy {
  std::string token;          // "" when none is required
  bool loopback_bind = true;  // bound to a loopback address: Host must name one
};

// What a request brings that the guard judges (header values as received, "" when absent).
struct RequestCredentials {
  std::string method;         // "GET", "POST", ...
  std::string host;           // Host header, "127.0.0.1:8421"
  std::string origin;         // Origin header
  std::string authorization;  // Authorization header
  std::string cookie;         // Cookie header
  std::string query_token;    // ?token=
};

struct GuardVerdict {
  int http_status = 200;  // 200 allowed; 401 or 403 refused
  std::string error;      // why, for the {"error": ...} body
  bool token_from_query = false;  // allowed by ?token=: the caller sets the cookie
};

GuardVerdict CheckRequest(const AccessPolicy& policy, const RequestCredentials& request);

// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

// "127.0.0.1:8421" -> "127.0.0.1", "[::1]:8421" -> "::1", "example" -> "example".
std::string_view HostWithoutPort(std::string_view host_header);

// A fresh token: 32 bytes from getrandom(2), hex. Fails only when the kernel refuses.
StatusOr<std::string> GenerateToken();

// --token values: 16 to 256 characters of [A-Za-z0-9._~-] (safe in a URL, a header and a
// cookie without escaping). InvalidArgument naming the flag otherwise.
Status ValidateToken(const std::string& token);

// The Set-Cookie value that keeps `token` for the page's later requests.
std::string TokenCookieHeader(const std::string& token);

}  // namespace stepscope::server
