// The compare document (run_comparison.h) as a text table for a terminal: at most 100 columns,
// plain ASCII, every number taken from the document so text and --json never disagree.
//
// Callers: cli/compare_command.cc; the tests. Pure function; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace stepscope::compare {

inline constexpr size_t kTextWidth = 100;

std::string FormatComparisonText(const nlohmann::json& document);

// A duration for people: "20.1 s" under 100 s, "12 min 05 s" under 100 min, else "504 h 46 min".
std::string HumanDuration(double seconds);
// printf into a std::string, for one line of a text table (at most 511 bytes).
std::string FormatLine(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Cuts `text` to at most `width` bytes without splitting a UTF-8 sequence, marking the cut with
// "..."; newlines and tabs become spaces (names are untrusted text).
std::string FitText(std::string text, size_t width);

}  // namespace stepscope::compare
