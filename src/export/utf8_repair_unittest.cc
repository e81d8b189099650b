#include "export/utf8_repair.h"

#include <gtest/gtest.h>

#include <string>

namespace stepscope::exporting {
namespace {

const std::string kFffd(kReplacementCharacter);

TEST(Utf8RepairTest, KeepsWellFormedTextOfEveryLength) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";  // a é € 😀 z
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(ReplaceInvalidUtf8(text), text);
  EXPECT_EQ(ReplaceInvalidUtf8(""), "");
  EXPECT_EQ(ReplaceInvalidUtf8(std::string("nul\0inside", 10)), std::string("nul\0inside", 10));
}

TEST(Utf8RepairTest, ReplacesEachMaximalIllFormedSubpartOnce) {
  // The cases of Unicode §3.9 Table 3-8, as Python's decode("utf-8", "replace") gives them.
  EXPECT_EQ(ReplaceInvalidUtf8("a\x80z"), "a" + kFffd + "z");                      // stray continuation
  EXPECT_EQ(ReplaceInvalidUtf8("\xC0\xAF"), kFffd + kFffd);                          // overlong lead C0
  EXPECT_EQ(ReplaceInvalidUtf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);              // overlong 3-byte
  EXPECT_EQ(ReplaceInvalidUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // surrogate
  EXPECT_EQ(ReplaceInvalidUtf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // above U+10FFFF
  EXPECT_EQ(ReplaceInvalidUtf8("\xE2\x82z"), kFffd + "z");                           // cut short: one
  EXPECT_EQ(ReplaceInvalidUtf8("\xF0\x9F\x98"), kFffd);                              // cut at the end
  EXPECT_EQ(ReplaceInvalidUtf8("\xFF\xFE"), kFffd + kFffd);
  EXPECT_FALSE(IsValidUtf8("ok\xE2\x82"));
  EXPECT_TRUE(IsValidUtf8(ReplaceInvalidUtf8("\xE2\x82\xC0\xF5\x80")));
}

}  // namespace
}  // namespace stepscope::exporting
