#include "server/dashboard_page.h"

namespace stepscope::server {
namespace {

// The application mounts itself into #stepscope-dashboard (web/src/dashboard/main.ts).
constexpr std::string_view kPageHtml = R"(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>stepscope dashboard</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<div id="stepscope-dashboard"></div>
<noscript>The stepscope dashboard needs JavaScript; `stepscope report RUN` writes a report that opens without a server.</noscript>
</body>
</html>
)";

std::string Join(internal::AssetChunks assets) {
  std::string text;
  for (size_t i = 0; i < assets.count; ++i) text += assets.chunks[i];
  return text;
}

}  // namespace

std::string_view DashboardPageHtml() { return kPageHtml; }

const std::string& DashboardScript() {
  static const std::string* const script = new std::string(Join(internal::DashboardScriptChunks()));
  return *script;
}

const std::string& DashboardStyle() {
  static const std::string* const style = new std::string(Join(internal::DashboardStyleChunks()));
  return *style;
}

}  // namespace stepscope::server
