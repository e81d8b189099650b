#include "server/timeline_answer.h"

#include <string>
#include <unordered_map>

#include "analysis/step_times.h"
#include "export/trace_names.h"

namespace stepscope::server {

StatusOr<nlohmann::json> TimelineAnswer(const analysis::Model& model, const analysis::TimelineIndex& index,
                                        const TimelineQuery& query) {
  if (query.width_px < 1 || query.width_px > kMaxTimelineWidthPx) {
    return InvalidArgumentError("width_px must be 1 to " + std::to_string(kMaxTimelineWidthPx) + ", not " +
                                std::to_string(query.width_px));
  }
  analysis::TimelineViewport viewport;
  viewport.width_px = query.width_px;
  viewport.start_ns = query.from_ns > 0 ? query.from_ns : model.first_ns();
  viewport.end_ns = query.to_ns > 0 ? query.to_ns : model.last_ns();
  nlohmann::json answer = nlohmann::json::object();
  if (query.step) {
    const analysis::StepSpan span = analysis::FindStepSpan(model, *query.step, *query.step);
    if (!span.found) {
      return NotFoundError("the run has no step " + std::to_string(*query.step) +
                           (span.lowest < 0 ? std::string("; it recorded no steps")
                                            : "; its steps are " + std::to_string(span.lowest) + " to " +
                                                  std::to_string(span.highest)));
    }
    viewport.start_ns = span.start_ns;
    viewport.end_ns = span.end_ns;
    answer["step"] = {{"number", *query.step}, {"start_ns", span.start_ns}, {"end_ns", span.end_ns}};
  }
  if (viewport.end_ns < viewport.start_ns) {
    return InvalidArgumentError("from_ns must not be after to_ns");
  }
  const analysis::TimelineView view = index.View(viewport);

  const exporting::TraceNames names(model);
  const analysis::TrackLayout& layout = index.layout();
  nlohmann::json tracks = nlohmann::json::array();
  for (uint32_t id = 0; id < layout.tracks.size(); ++id) {
    const analysis::Track& track = layout.tracks[id];
    const analysis::ThreadKey& thread = layout.threads[track.thread];
    tracks.push_back({{"id", id},
                      {"process", thread.device >= 0 ? names.Gpu(thread.node, thread.device)
                                                     : names.HostProcess(thread.node, thread.pid)},
                      {"thread", names.Thread(thread, 0)},  // the page adds the overlap lane itself
                      {"device", thread.device},
                      {"lane", track.lane}});
  }
  // Names go once into a table: a view of 50,000 slices has a few hundred distinct names.
  nlohmann::json name_table = nlohmann::json::array();
  std::unordered_map<analysis::StringId, size_t> name_index;
  nlohmann::json slices = nlohmann::json::array();
  for (const analysis::TimelineSlice& slice : view.slices) {
    const analysis::StringId name = model.events()[slice.event].name;
    auto [it, added] = name_index.emplace(name, name_table.size());
    if (added) name_table.push_back(model.String(name));
    slices.push_back(nlohmann::json::array(
        {slice.track, slice.depth, slice.start_ns - viewport.start_ns, slice.end_ns - slice.start_ns, it->second,
         slice.count}));
  }
  nlohmann::json flows = nlohmann::json::array();
  for (const analysis::TimelineFlow& flow : view.flows) flows.push_back({flow.from_slice, flow.to_slice});
  answer["from_ns"] = viewport.start_ns;
  answer["to_ns"] = viewport.end_ns;
  answer["width_px"] = viewport.width_px;
  answer["ns_per_column"] = view.ns_per_column;
  answer["widenings"] = view.widenings;
  answer["events"] = view.events;
  answer["tracks"] = std::move(tracks);
  answer["names"] = std::move(name_table);
  answer["slices"] = std::move(slices);
  answer["flows"] = std::move(flows);
  return answer;
}

}  // namespace stepscope::server
