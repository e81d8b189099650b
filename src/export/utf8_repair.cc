#include "export/utf8_repair.h"

#include <cstdint>

namespace stepscope::exporting {
namespace {

// The length of the well-formed sequence at the front of `text` (1 to 4), or 0 when it starts
// with an ill-formed one; then `*subpart` is the length of its maximal ill-formed subpart (the
// bytes one U+FFFD replaces, at least 1). Ranges from Unicode Table 3-7.
size_t SequenceLength(std::string_view text, size_t* subpart) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint8_t second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;   // overlong below U+0800
    if (lead == 0xED) second_high = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;   // overlong below U+10000
    if (lead == 0xF4) second_high = 0x8F;  // above U+10FFFF
  } else {
    *subpart = 1;  // a continuation byte without a lead, C0, C1 or F5..FF
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    const uint8_t low = i == 1 ? second_low : 0x80;
    const uint8_t high = i == 1 ? second_high : 0xBF;
    if (i >= text.size() || byte(i) < low || byte(i) > high) {
      *subpart = i;
      return 0;
    }
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t subpart = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t length = SequenceLength(text.substr(i), &subpart);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t subpart = 0;
    const size_t length = SequenceLength(text.substr(i), &subpart);
    if (length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append(kReplacementCharacter);
      i += subpart;
    }
  }
  return out;
}

}  // namespace stepscope::exporting
