// Makes text valid UTF-8 for outputs whose readers reject anything else (CSV opened by Python's
// csv module or a spreadsheet). Names in a run come from foreign traces and from whatever bytes
// a job passed to the recorder, so they can hold anything.
//
// Each maximal ill-formed subpart (Unicode §3.9, "U+FFFD substitution of maximal subparts",
// the same replacement as Python's bytes.decode("utf-8", "replace") and the WHATWG decoder)
// becomes one U+FFFD: overlong forms, surrogates, code points above U+10FFFF, stray
// continuation bytes and sequences cut short.
//
// Callers: csv_export.cc. Stateless.
#pragma once

#include <string>
#include <string_view>

namespace stepscope::exporting {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// True when `text` is well-formed UTF-8 (the fast path: most names are).
bool IsValidUtf8(std::string_view text);

// `text` with every maximal ill-formed subpart replaced by U+FFFD.
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace stepscope::exporting
