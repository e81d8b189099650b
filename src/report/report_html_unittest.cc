#include "report/report_html.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

json ReportWithJob(const std::string& job) {
  return json{{"schema", "stepscope.report"}, {"version", 1}, {"kind", "report"}, {"run", {{"job", job}}}};
}

// The text between <script type="application/json" id="stepscope-model"> and its </script>.
std::string EmbeddedModel(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"stepscope-model\">";
  size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  begin += open.size();
  size_t end = html.find("</script>", begin);
  EXPECT_NE(end, std::string::npos);
  return html.substr(begin, end - begin);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++count;
  return count;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string TempDir() {
  char pattern[] = "/tmp/report_html_unittest.XXXXXX";
  const char* dir = mkdtemp(pattern);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}

TEST(ReportHtmlTest, TitleIsTheJobNameEscaped) {
  std::string html = RenderReportHtml(ReportWithJob("train<b>&\"x'"));
  EXPECT_THAT(html, HasSubstr("<title>stepscope report: train&lt;b&gt;&amp;&quot;x&#39;</title>"));
}

TEST(ReportHtmlTest, TitleWithoutJobIsGeneric) {
  EXPECT_THAT(RenderReportHtml(json{{"schema", "stepscope.report"}}), HasSubstr("<title>stepscope report</title>"));
  // Not an object at all: still a page, never a crash.
  EXPECT_THAT(RenderReportHtml(json::array({1, 2})), HasSubstr("<title>stepscope report</title>"));
  EXPECT_THAT(RenderReportHtml(json{{"run", {{"job", 7}}}}), HasSubstr("<title>stepscope report</title>"));
}

TEST(ReportHtmlTest, CompareTitleNamesBothJobs) {
  json model = {{"schema", "stepscope.report"}, {"kind", "compare"},
                {"runs", json::array({{{"label", "A"}, {"job", "base"}}, {{"label", "B"}, {"job", "fast"}}})}};
  EXPECT_THAT(RenderReportHtml(model), HasSubstr("<title>stepscope compare: base vs fast</title>"));
}

TEST(ReportHtmlTest, NamesCannotCloseTheModelScript) {
  json model = ReportWithJob("job");
  model["framework"]["cpu_operators"] = json::array({{{"name", "</script><script>alert(1)</script>"}}});
  model["framework"]["note"] = "<!--<script>";
  std::string html = RenderReportHtml(model);
  std::string embedded = EmbeddedModel(html);
  EXPECT_THAT(embedded, Not(HasSubstr("</")));
  EXPECT_THAT(embedded, Not(HasSubstr("<!--")));
  EXPECT_THAT(embedded, HasSubstr("<\\/script><script>alert(1)<\\/script>"));
  EXPECT_THAT(embedded, HasSubstr("<\\u0021--<script>"));
  // The escapes are JSON escapes: parsing gives back exactly the model.
  EXPECT_EQ(json::parse(embedded, nullptr, false), model);
  // Exactly two script elements close: the model and the bundle.
  EXPECT_EQ(Count(html, "</script>"), 2u);
}

TEST(ReportHtmlTest, InvalidUtf8InNamesIsReplacedNotThrown) {
  json model = ReportWithJob("job");
  model["framework"]["cpu_operators"] = json::array({{{"name", std::string("bad\xff\xfe name")}}});
  std::string embedded = EmbeddedModel(RenderReportHtml(model));
  json parsed = json::parse(embedded, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed["framework"]["cpu_operators"][0]["name"], "bad\xEF\xBF\xBD\xEF\xBF\xBD name");
}

TEST(ReportHtmlTest, PageIsSelfContained) {
  std::string html = RenderReportHtml(ReportWithJob("job"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("<meta charset=\"utf-8\">"));
  EXPECT_THAT(html, HasSubstr("<div id=\"app\"></div>"));
  EXPECT_THAT(html, HasSubstr("<noscript><p>This stepscope report draws its tables and charts with JavaScript"));
  // The bundle is inline: the script reads the model by id, and Chart.js is in it.
  EXPECT_THAT(html, HasSubstr("getElementById(\"stepscope-model\")"));
  EXPECT_THAT(html, HasSubstr("Chart.js v4"));
  // Nothing is loaded from elsewhere.
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  // The model precedes the bundle, which runs when parsed and needs it.
  EXPECT_LT(html.find("id=\"stepscope-model\">"), html.find("getElementById(\"stepscope-model\")"));
}

TEST(ReportHtmlTest, AssetChunksAreNonEmptyAndUnder64KiB) {
  for (internal::AssetChunks assets : {internal::ReportScriptChunks(), internal::ReportStyleChunks()}) {
    ASSERT_GT(assets.count, 0u);
    for (size_t i = 0; i < assets.count; ++i) {
      EXPECT_GT(assets.chunks[i].size(), 0u);
      EXPECT_LT(assets.chunks[i].size(), 65536u);
    }
  }
  // The script bundle (Chart.js and the front end) is well over one chunk.
  EXPECT_GT(internal::ReportScriptChunks().count, 1u);
}

TEST(ReportHtmlTest, EscapeHtmlEscapesAllFiveCharacters) {
  EXPECT_EQ(internal::EscapeHtml("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  EXPECT_EQ(internal::EscapeHtml(""), "");
}

TEST(ReportHtmlTest, WriteReplacesTheFileAtomically) {
  std::string dir = TempDir();
  std::string path = dir + "/report.html";
  {
    std::ofstream old(path);
    old << "old report";
  }
  json model = ReportWithJob("written");
  ASSERT_TRUE(WriteReportHtml(model, path).ok());
  EXPECT_EQ(ReadAll(path), RenderReportHtml(model));
  // No temporary file is left beside it: the directory empties with report.html gone.
  EXPECT_EQ(std::remove(path.c_str()), 0);
  EXPECT_EQ(rmdir(dir.c_str()), 0) << "the directory should be empty after removing report.html";
}

TEST(ReportHtmlTest, WriteErrorIsOneLineNamingThePath) {
  std::string path = "/nonexistent-stepscope-dir/sub/report.html";
  Status status = WriteReportHtml(ReportWithJob("job"), path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_THAT(status.message(), HasSubstr("cannot write the HTML report to '" + path + "'"));
  EXPECT_THAT(status.message(), HasSubstr("check that its directory exists and is writable"));
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
}

TEST(ReportHtmlTest, WriteToADirectoryFailsAndKeepsIt) {
  std::string dir = TempDir();
  Status status = WriteReportHtml(ReportWithJob("job"), dir);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("'" + dir + "'"));
  struct stat info {};
  ASSERT_EQ(stat(dir.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(rmdir(dir.c_str()), 0) << "no temporary file may be left in " << dir;
}

TEST(ReportHtmlTest, WriteWithoutPathIsInvalidArgument) {
  Status status = WriteReportHtml(ReportWithJob("job"), "");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("-o FILE"));
}

}  // namespace
}  // namespace stepscope::report
