// Exact conversion of Chrome-trace timestamps (microseconds written as decimal text, Kineto
// prints 3 decimals) to integer nanoseconds, for the Kineto importer (kineto_file_parser.cc).
//
// Why not `llround(std::stod(text) * 1000)`: absolute Kineto timestamps are ~1.7e15 µs, where a
// double's spacing is 0.25 µs, so the nanosecond digits of a "ns resolution" trace
// (1712195495519689.047) would be rounded away by up to 125 ns. The integer and fraction parts
// are read separately instead; only exponent notation (never written by Kineto) goes through a
// double. Pure function, no allocation, safe on any bytes.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace stepscope::analysis {

// Exponent notation (never written by Kineto, valid JSON all the same) goes through a double.
inline bool ParseExponentMicrosToNanos(std::string_view token, int64_t* ns) {
  double us = 0;
  auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), us);
  if (error != std::errc() || end != token.data() + token.size()) return false;
  const double scaled = us * 1000.0;
  if (!std::isfinite(scaled) || std::fabs(scaled) >= 9.2e18) return false;
  *ns = std::llround(scaled);
  return true;
}

// `token` is a JSON number (trailing whitespace allowed). Sets *ns to round(token * 1000),
// halves away from zero, and returns true; false when it is not a number or out of range.
inline bool ParseMicrosToNanos(std::string_view token, int64_t* ns) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t' || token.back() == ',')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return false;
  // One pass over the digits: Kineto writes ~2 timestamps per event, so this is on the hot
  // path of the importer (std::from_chars plus find() cost ~10x more here).
  const char* cursor = token.data();
  const char* const end = cursor + token.size();
  bool negative = false;
  if (*cursor == '-') {
    negative = true;
    ++cursor;
  }
  if (cursor == end || *cursor < '0' || *cursor > '9') return false;
  constexpr uint64_t kMaxWholeUs = static_cast<uint64_t>(INT64_MAX / 1000 - 1);
  uint64_t whole_us = 0;
  for (; cursor != end && *cursor >= '0' && *cursor <= '9'; ++cursor) {
    whole_us = whole_us * 10 + static_cast<uint64_t>(*cursor - '0');
    if (whole_us > kMaxWholeUs) {  // checked per digit: no wrap-around
      return token.find_first_of("eE") != std::string_view::npos && ParseExponentMicrosToNanos(token, ns);
    }
  }
  int64_t frac_ns = 0;
  if (cursor != end) {
    if (*cursor == 'e' || *cursor == 'E') return ParseExponentMicrosToNanos(token, ns);
    if (*cursor != '.') return false;
    ++cursor;
    if (cursor == end) return false;
    size_t digits = 0;
    for (; cursor != end; ++cursor, ++digits) {
      const char c = *cursor;
      if (c < '0' || c > '9') return c == 'e' || c == 'E' ? ParseExponentMicrosToNanos(token, ns) : false;
      if (digits < 3) frac_ns = frac_ns * 10 + (c - '0');
      if (digits == 3 && c >= '5') frac_ns += 1;  // the first dropped digit decides the rounding
    }
    for (; digits < 3; ++digits) frac_ns *= 10;
  }
  const int64_t magnitude = static_cast<int64_t>(whole_us) * 1000 + frac_ns;
  *ns = negative ? -magnitude : magnitude;
  return true;
}

}  // namespace stepscope::analysis
