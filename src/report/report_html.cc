// Assembles the self-contained HTML report (see report_html.h).

#include "report/report_html.h"

#include <cerrno>
#include <cstring>

#include "base/file_system.h"

namespace stepscope::report {
namespace internal {

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ScriptSafeJson(const nlohmann::json& model) {
  // `replace` turns invalid UTF-8 in names into U+FFFD instead of throwing (the core never
  // throws; names come from traces we do not control).
  const std::string text = model.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  // Inside <script>, "</" could close the element and "<!--" switches the HTML tokenizer into
  // the escaped state. Both can only occur inside JSON strings, where "\/" and "\u0021" are
  // valid escapes, so JSON.parse gives back the same text.
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (text.compare(i, 4, "<!--") == 0) {
      out += "<\\u0021--";
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace internal

namespace {

std::string StringAt(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Title(const nlohmann::json& model) {
  if (StringAt(model, "kind") == "compare") {
    auto runs = model.is_object() ? model.find("runs") : model.end();
    if (model.is_object() && runs != model.end() && runs->is_array() && runs->size() >= 2) {
      return "stepscope compare: " + StringAt((*runs)[0], "job") + " vs " + StringAt((*runs)[1], "job");
    }
    return "stepscope compare";
  }
  std::string job;
  if (model.is_object()) {
    auto run = model.find("run");
    if (run != model.end()) job = StringAt(*run, "job");
  }
  return job.empty() ? "stepscope report" : "stepscope report: " + job;
}

void AppendChunks(internal::AssetChunks assets, std::string* out) {
  for (size_t i = 0; i < assets.count; ++i) out->append(assets.chunks[i]);
}

}  // namespace

std::string RenderReportHtml(const nlohmann::json& model) {
  std::string html;
  html.reserve(512 * 1024);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"stepscope\">\n<title>";
  html += internal::EscapeHtml(Title(model));
  html += "</title>\n<style>\n";
  AppendChunks(internal::ReportStyleChunks(), &html);
  html +=
      "\n</style>\n</head>\n<body>\n"
      "<noscript><p>This stepscope report draws its tables and charts with JavaScript: allow "
      "scripts for this file, or read the same data with <code>stepscope report --json</code>."
      "</p></noscript>\n<div id=\"app\"></div>\n"
      "<script type=\"application/json\" id=\"stepscope-model\">";
  html += internal::ScriptSafeJson(model);
  html += "</script>\n<script>\n";
  AppendChunks(internal::ReportScriptChunks(), &html);
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

Status WriteReportHtml(const nlohmann::json& model, const std::string& path) {
  if (path.empty()) return InvalidArgumentError("no path for the HTML report: pass -o FILE");
  Status status = WriteFileAtomically(path, RenderReportHtml(model));
  if (!status.ok()) {
    return Status(status.code(), "cannot write the HTML report to '" + path + "' (" + status.message() +
                                     "): check that its directory exists and is writable");
  }
  return OkStatus();
}

}  // namespace stepscope::report
