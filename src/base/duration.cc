#include "base/duration.h"

#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace stepscope {

StatusOr<int64_t> ParseDurationNs(std::string_view text) {
  auto invalid = [&] {
    return InvalidArgumentError("'" + std::string(text) +
                                "' is not a duration; use a number with ns, us, ms, s, m or h "
                                "(e.g. 500ms, 2s, 1h30m)");
  };
  // One or more <number><unit> parts ("1h30m"); a lone number is seconds.
  double total_ns = 0;
  std::string_view rest = text;
  int parts = 0;
  while (!rest.empty()) {
    size_t unit_pos = 0;
    while (unit_pos < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[unit_pos])) || rest[unit_pos] == '.')) {
      ++unit_pos;
    }
    if (unit_pos == 0) return invalid();
    double number = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + unit_pos, number);
    if (ec != std::errc() || ptr != rest.data() + unit_pos || !std::isfinite(number)) return invalid();
    size_t unit_end = unit_pos;
    while (unit_end < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_end]))) ++unit_end;
    const std::string_view unit = rest.substr(unit_pos, unit_end - unit_pos);
    double scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s" || (unit.empty() && parts == 0 && unit_end == rest.size())) scale = 1e9;
    else if (unit == "m") scale = 60e9;
    else if (unit == "h") scale = 3600e9;
    else return invalid();
    total_ns += number * scale;
    rest.remove_prefix(unit_end);
    ++parts;
  }
  if (parts == 0 || total_ns > 9.2e18) return invalid();
  return static_cast<int64_t>(std::llround(total_ns));
}

std::string FormatDurationNs(int64_t ns) {
  char buf[64];
  if (ns % 3600'000'000'000 == 0 && ns != 0) std::snprintf(buf, sizeof buf, "%lldh", (long long)(ns / 3600'000'000'000));
  else if (ns % 60'000'000'000 == 0 && ns != 0) std::snprintf(buf, sizeof buf, "%lldm", (long long)(ns / 60'000'000'000));
  else if (ns % 1'000'000'000 == 0) std::snprintf(buf, sizeof buf, "%llds", (long long)(ns / 1'000'000'000));
  else if (ns % 1'000'000 == 0) std::snprintf(buf, sizeof buf, "%lldms", (long long)(ns / 1'000'000));
  else if (ns % 1'000 == 0) std::snprintf(buf, sizeof buf, "%lldus", (long long)(ns / 1'000));
  else std::snprintf(buf, sizeof buf, "%lldns", (long long)ns);
  return buf;
}

}  // namespace stepscope
