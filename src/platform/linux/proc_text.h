// Small tokenizing helpers shared by the /proc parsers in this folder (internal to
// platform/linux; other components call the Parse* functions instead).
//
// /proc files are ASCII, whitespace-separated and newline-terminated. These helpers never
// allocate beyond the caller's vector and never read past the given string_view, so a parser
// built on them cannot crash on truncated or hostile text.
//
// Threading: pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::proc_text {

// Pops the next line (without its '\n') off the front of `text`. `*terminated` tells whether
// the line ended with '\n' (a missing newline on the last line usually means a cut-short read).
std::string_view NextLine(std::string_view& text, bool* terminated = nullptr);

// Splits `line` on runs of spaces and tabs into `fields` (cleared first).
void SplitFields(std::string_view line, std::vector<std::string_view>& fields);

// Parses a whole field as an unsigned decimal; nullopt on empty text, any non-digit or overflow.
std::optional<uint64_t> ParseUint64(std::string_view field);
// Parses a whole field as a signed decimal; nullopt on anything else.
std::optional<int64_t> ParseInt64(std::string_view field);

// `text` shortened to at most 40 characters for error messages, so a hostile file cannot make
// a multi-megabyte Status.
std::string Excerpt(std::string_view text);

}  // namespace stepscope::proc_text
