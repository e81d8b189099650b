// Test tool: renders a report-model JSON file (docs/report-model.md) into the self-contained
// HTML report with stepscope::report_html, so the browser test can open hand-written models
// (one node without GPU, many nodes with GPUs, a compare document) as well as real runs.
//
//   render_report_html MODEL.json OUT.html

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report_html.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: render_report_html MODEL.json OUT.html\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "render_report_html: cannot read '%s': check the path\n", argv[1]);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json model = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (model.is_discarded()) {
    std::fprintf(stderr, "render_report_html: '%s' is not valid JSON: fix or regenerate it\n", argv[1]);
    return 1;
  }
  stepscope::Status status = stepscope::report::WriteReportHtml(model, argv[2]);
  if (!status.ok()) {
    std::fprintf(stderr, "render_report_html: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
