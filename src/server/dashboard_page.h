// What the browser loads before it talks to the API: the page shell (a fixed HTML document with
// no inline script, so the Content-Security-Policy can forbid any) and the dashboard bundle
// (web/src/dashboard, bundled by web/build.mjs and embedded at build time by
// web/embed_assets.cmake, as the report's is).
//
// Callers: dashboard_server.cc. Pure functions over constant data; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stepscope::server {

// The page shell served at "/".
std::string_view DashboardPageHtml();
// The bundle: /assets/dashboard.js and /assets/dashboard.css.
const std::string& DashboardScript();
const std::string& DashboardStyle();

namespace internal {

// Defined in the source generated from web/ (web/embed_assets.cmake); chunks of under 64 KB.
struct AssetChunks {
  const std::string_view* chunks;
  size_t count;
};
AssetChunks DashboardScriptChunks();
AssetChunks DashboardStyleChunks();

}  // namespace internal
}  // namespace stepscope::server
