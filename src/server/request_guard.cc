#include "server/request_guard.h"

#include <arpa/inet.h>
#include <sys/random.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace stepscope::server {
namespace {

// Compares in time independent of where the strings differ: the token is a secret.
bool SecretEquals(std::string_view a, std::string_view b) {
  if (a.empty() || a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string_view CookieValue(std::string_view cookies, std::string_view name) {
  while (!cookies.empty()) {
    const size_t end = cookies.find(';');
    std::string_view pair = Trim(cookies.substr(0, end));
    cookies = end == std::string_view::npos ? std::string_view() : cookies.substr(end + 1);
    const size_t equals = pair.find('=');
    if (equals != std::string_view::npos && pair.substr(0, equals) == name) return pair.substr(equals + 1);
  }
  return {};
}

bool ChangesThings(std::string_view method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string_view HostWithoutPort(std::string_view host_header) {
  if (host_header.starts_with('[')) {
    const size_t close = host_header.find(']');
    return close == std::string_view::npos ? host_header : host_header.substr(1, close - 1);
  }
  const size_t colon = host_header.find(':');
  return colon == std::string_view::npos ? host_header : host_header.substr(0, colon);
}

GuardVerdict CheckRequest(const AccessPolicy& policy, const RequestCredentials& request) {
  GuardVerdict verdict;
  if (policy.loopback_bind && !request.host.empty() && !IsLoopbackHost(HostWithoutPort(request.host))) {
    return {403, "this server answers only requests addressed to the loopback address it listens on "
                 "(Host '" + request.host + "'); open the URL `stepscope serve` printed", false};
  }
  if (ChangesThings(request.method) && !request.origin.empty() && request.origin != "http://" + request.host) {
    return {403, "request from another site (Origin '" + request.origin + "') refused; use the dashboard's own page",
            false};
  }
  if (policy.token.empty()) return verdict;
  std::string_view bearer = Trim(request.authorization);
  if (bearer.starts_with("Bearer ") && SecretEquals(Trim(bearer.substr(7)), policy.token)) return verdict;
  if (SecretEquals(CookieValue(request.cookie, kTokenCookie), policy.token)) return verdict;
  if (SecretEquals(request.query_token, policy.token)) {
    verdict.token_from_query = true;
    return verdict;
  }
  return {401, "this server needs its token: open the URL `stepscope serve` printed (it ends in ?token=...), "
               "or send `Authorization: Bearer TOKEN`", false};
}

StatusOr<std::string> GenerateToken() {
  unsigned char bytes[32];
  size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t got = getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError(std::string("cannot generate a token: getrandom failed (") + std::strerror(errno) +
                     "); pass one with --token");
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token += kHex[byte >> 4];
    token += kHex[byte & 15];
  }
  return token;
}

Status ValidateToken(const std::string& token) {
  bool plain = token.size() >= 16 && token.size() <= 256;
  for (char c : token) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '~' || c == '-');
  }
  if (!plain) {
    return InvalidArgumentError("--token must be 16 to 256 characters of letters, digits, '.', '_', '~' or '-'; "
                                "leave it out to have one generated");
  }
  return OkStatus();
}

std::string TokenCookieHeader(const std::string& token) {
  return std::string(kTokenCookie) + "=" + token + "; HttpOnly; SameSite=Strict; Path=/";
}

}  // namespace stepscope::server
