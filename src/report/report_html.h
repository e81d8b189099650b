// The self-contained HTML report: one file holding the web/ front end (JS and CSS bundled at
// build time by src/report/html.cmake) and the report-model document (docs/report-model.md)
// it renders. The file opens offline: no CDN, no fonts, no fetch.
//
// Callers: `stepscope report`, the end of `stepscope run`, `stepscope compare`.
// Threading: pure functions over their arguments; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::report {

// The whole HTML page for a report-model document of kind "report" or "compare". The document
// goes into <script type="application/json" id="stepscope-model"> with "</" written as "<\/"
// (and "<!--" as "<\u0021--") so that no name in it can end the element; invalid UTF-8 in
// names is replaced by U+FFFD. The <title> comes from run.job (or the two compared jobs).
std::string RenderReportHtml(const nlohmann::json& model);

// RenderReportHtml written to `path` atomically (temporary file in the same directory, then
// rename): a reader never sees half a report. Errors are one line naming `path`.
Status WriteReportHtml(const nlohmann::json& model, const std::string& path);

namespace internal {

// The bundled front end, defined in the source generated from web/ at build time
// (web/embed_assets.cmake). Chunks of under 64 KB each: compilers cap string literals.
struct AssetChunks {
  const std::string_view* chunks;
  size_t count;
};
AssetChunks ReportScriptChunks();
AssetChunks ReportStyleChunks();

// Text escaped for HTML element content and attribute values (& < > " ').
std::string EscapeHtml(std::string_view text);

// The document as JSON text that is safe inside a <script> element.
std::string ScriptSafeJson(const nlohmann::json& model);

}  // namespace internal
}  // namespace stepscope::report
