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

// `token` is a JSON number (trailing whitespace allowed). Sets *ns to round(token * 1000),
// halves away from zero, and returns true; false when it is not a number or out of range.
inline bool ParseMicrosToNanos(std::string_view token, int64_t* ns) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t' || token.back() == ',')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return false;
  if (token.find_first_of("eE") != std::string_view::npos) {
    double us = 0;
    auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), us);
    if (error != std::errc() || end != token.data() + token.size()) return false;
    const double scaled = us * 1000.0;
    if (!std::isfinite(scaled) || std::fabs(scaled) >= 9.2e18) return false;
    *ns = std::llround(scaled);
    return true;
  }
  bool negative = false;
  if (token.front() == '-') {
    negative = true;
    token.remove_prefix(1);
  }
  const size_t dot = token.find('.');
  const std::string_view whole = token.substr(0, dot);
  if (whole.empty()) return false;
  uint64_t whole_us = 0;
  auto [end, error] = std::from_chars(whole.data(), whole.data() + whole.size(), whole_us);
  if (error != std::errc() || end != whole.data() + whole.size()) return false;
  if (whole_us > static_cast<uint64_t>(INT64_MAX / 1000 - 1)) return false;
  int64_t frac_ns = 0;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = token.substr(dot + 1);
    if (fraction.empty()) return false;
    for (size_t i = 0; i < fraction.size(); ++i) {
      const char c = fraction[i];
      if (c < '0' || c > '9') return false;
      if (i < 3) frac_ns = frac_ns * 10 + (c - '0');
      if (i == 3 && c >= '5') frac_ns += 1;  // the first dropped digit decides the rounding
    }
    for (size_t i = fraction.size(); i < 3; ++i) frac_ns *= 10;
  }
  const int64_t magnitude = static_cast<int64_t>(whole_us) * 1000 + frac_ns;
  *ns = negative ? -magnitude : magnitude;
  return true;
}

}  // namespace stepscope::analysis
