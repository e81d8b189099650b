// Report generation speed and size (issue 5: "report generation for the synthetic 24 h run
// <= 10 s including analysis; HTML <= 5 MB").
//
// In one process, --repetitions times each (median reported):
//   load     LoadRun(RUN): the analysis model alone, the baseline
//   model    report::BuildRunReport(RUN): load + rules (rules.json when finished, else evaluated)
//            + the run's facts + every section, what `stepscope report --json` does
//   html     RenderReportHtml(model), when this build has the renderer
// then the serialized model's and the HTML's bytes, and the process's peak RSS. Generate the run
// with make_synthetic_run (benchmarks/analysis.cmake). Exit status 1 when model (+ html) misses
// 10 s or the output misses 5 MB.
//
// Usage: report_benchmark RUN [--repetitions=3]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "analysis/run_loader.h"
#include "report/run_info.h"
#include "report/run_report.h"
#include "rules/profiler_report.h"
#include "report/report_model.h"
#ifdef STEPSCOPE_HAVE_REPORT_HTML
#include "report/report_html.h"
#endif

namespace {

constexpr double kBarSeconds = 10.0;
constexpr double kBarBytes = 5.0 * 1024 * 1024;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

double TimeIt(const std::function<bool()>& work, bool* ok) {
  const auto start = std::chrono::steady_clock::now();
  *ok = work() && *ok;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string run;
  int repetitions = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--repetitions=", 14) == 0) repetitions = std::max(1, std::atoi(argv[i] + 14));
    else run = argv[i];
  }
  if (run.empty()) {
    std::fprintf(stderr, "usage: report_benchmark RUN [--repetitions=3] (make one with make_synthetic_run DIR)\n");
    return 2;
  }
  bool ok = true;
  std::vector<double> load_s, model_s, html_s;
  size_t model_bytes = 0, html_bytes = 0;
  for (int r = 0; r < repetitions; ++r) {
    load_s.push_back(TimeIt([&] { return stepscope::analysis::LoadRun(run).ok(); }, &ok));
    nlohmann::json model;
    model_s.push_back(TimeIt(
        [&] {
          auto built = stepscope::report::BuildRunReport(run, 0, "stepscope benchmark");
          if (!built.ok()) std::fprintf(stderr, "report_benchmark: %s\n", built.status().message().c_str());
          if (built.ok()) model = std::move(built->model);
          return built.ok();
        },
        &ok));
    model_bytes = model.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
#ifdef STEPSCOPE_HAVE_REPORT_HTML
    html_s.push_back(TimeIt(
        [&] {
          html_bytes = stepscope::report::RenderReportHtml(model).size();
          return html_bytes > 0;
        },
        &ok));
#endif
  }
  // One more pass, stage by stage, to show where the model's time goes.
  {
    auto model = stepscope::analysis::LoadRun(run);
    if (model.ok()) {
      std::string source;
      nlohmann::json rules, info, document;
      const double rules_s = TimeIt(
          [&] {
            auto loaded = stepscope::report::LoadOrEvaluateRules(stepscope::rules::DefaultRulesOutputDir(run) + "/rules.json",
                                                                 *model, &source);
            if (loaded.ok()) rules = std::move(*loaded);
            return loaded.ok();
          },
          &ok);
      const double facts_s = TimeIt(
          [&] {
            info = stepscope::report::BuildRunInfo(run, *model);  // from the model alone, as the report
            return true;
          },
          &ok);
      stepscope::report::ReportInputs inputs;
      inputs.model = &*model;
      inputs.rules = rules;
      inputs.run_info = info;
      const double sections_s = TimeIt(
          [&] {
            document = stepscope::report::BuildReportModel(inputs);
            return true;
          },
          &ok);
      std::printf("stages         rules %.3f s (%s), run facts %.3f s, sections %.3f s\n",
                  rules_s, source.c_str(), facts_s, sections_s);
    }
  }
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const double total_s = Median(model_s) + Median(html_s);
  const size_t output_bytes = html_bytes > 0 ? html_bytes : model_bytes;
  std::printf("run            %s (%d repetitions, medians)\n", run.c_str(), repetitions);
  std::printf("load           %8.3f s   (baseline)\n", Median(load_s));
  std::printf("model          %8.3f s   (load + rules + facts + sections; %.3f s over load)\n", Median(model_s),
              Median(model_s) - Median(load_s));
  if (!html_s.empty()) std::printf("html           %8.3f s\n", Median(html_s));
  std::printf("model json     %8.3f MB\n", model_bytes / 1048576.0);
  if (html_bytes > 0) std::printf("html           %8.3f MB\n", html_bytes / 1048576.0);
  std::printf("peak rss       %8.1f MB\n", usage.ru_maxrss / 1024.0);
  const bool pass = ok && total_s <= kBarSeconds && output_bytes <= kBarBytes;
  std::printf("%s: %.3f s (bar %.0f s), %.3f MB (bar 5 MB)%s\n", pass ? "PASS" : "FAIL", total_s, kBarSeconds,
              output_bytes / 1048576.0, html_bytes > 0 ? "" : " [JSON only: no HTML renderer in this build]");
  return pass ? 0 : 1;
}
