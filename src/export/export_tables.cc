#include "export/export_tables.h"

#include <charconv>
#include <cmath>

#include "analysis/thread_tracks.h"
#include "export/trace_names.h"
#include "base/json_fields.h"

namespace stepscope::exporting {

using analysis::LayoutTracks;
using analysis::ThreadKey;
using analysis::TrackLayout;
namespace {

using analysis::EventArg;
using analysis::EventKind;
using analysis::FrameworkEvent;
using analysis::Model;
using I = ColumnType;

constexpr Column kRuns[] = {{"run_id", I::kInteger, "PRIMARY KEY"}, {"path", I::kText, "NOT NULL"},
                            {"job", I::kText, "NOT NULL"},          {"source", I::kText, "NOT NULL"},
                            {"first_ns", I::kInteger, ""},          {"last_ns", I::kInteger, ""},
                            {"complete_until_ns", I::kInteger, ""}, {"findings_origin", I::kText, "NOT NULL"},
                            {"schema_version", I::kInteger, "NOT NULL"}, {"problems", I::kText, "NOT NULL"}};
constexpr Column kNodes[] = {{"node_id", I::kInteger, "PRIMARY KEY"}, {"name", I::kText, "NOT NULL"},
                             {"instance_type", I::kText, ""},         {"instance_count", I::kInteger, ""},
                             {"cpu_cores", I::kInteger, ""},          {"gpu_count", I::kInteger, ""}};
constexpr Column kProcesses[] = {{"process_id", I::kInteger, "PRIMARY KEY"}, {"node_id", I::kInteger, "NOT NULL"},
                                 {"pid", I::kInteger, "NOT NULL"}};
constexpr Column kThreads[] = {{"thread_id", I::kInteger, "PRIMARY KEY"}, {"process_id", I::kInteger, "NOT NULL"},
                               {"node_id", I::kInteger, "NOT NULL"},      {"pid", I::kInteger, "NOT NULL"},
                               {"tid", I::kInteger, "NOT NULL"},          {"device", I::kInteger, ""},
                               {"name", I::kText, "NOT NULL"}};
constexpr Column kStrings[] = {{"string_id", I::kInteger, "PRIMARY KEY"}, {"value", I::kText, "NOT NULL"}};
constexpr Column kSpans[] = {{"span_id", I::kInteger, "PRIMARY KEY"}, {"thread_id", I::kInteger, "NOT NULL"},
                             {"node_id", I::kInteger, "NOT NULL"},    {"kind", I::kText, "NOT NULL"},
                             {"start_ns", I::kInteger, "NOT NULL"},   {"end_ns", I::kInteger, "NOT NULL"},
                             {"duration_ns", I::kInteger, "NOT NULL"}, {"phase_id", I::kInteger, "NOT NULL"},
                             {"name_id", I::kInteger, "NOT NULL"},    {"category_id", I::kInteger, "NOT NULL"},
                             {"step", I::kInteger, ""},               {"unfinished", I::kInteger, "NOT NULL"},
                             {"args", I::kText, ""}};
constexpr Column kSteps[] = {{"step_id", I::kInteger, "PRIMARY KEY"}, {"span_id", I::kInteger, "NOT NULL"},
                             {"node_id", I::kInteger, "NOT NULL"},    {"phase", I::kText, "NOT NULL"},
                             {"step", I::kInteger, "NOT NULL"},       {"start_ns", I::kInteger, "NOT NULL"},
                             {"end_ns", I::kInteger, "NOT NULL"},     {"duration_ns", I::kInteger, "NOT NULL"}};
constexpr Column kMetrics[] = {{"metric_id", I::kInteger, "PRIMARY KEY"}, {"node_id", I::kInteger, "NOT NULL"},
                               {"type", I::kText, "NOT NULL"},            {"name", I::kText, "NOT NULL"},
                               {"dimension", I::kText, "NOT NULL"},       {"metric", I::kText, "NOT NULL"},
                               {"samples", I::kInteger, "NOT NULL"}};
constexpr Column kSamples[] = {{"metric_id", I::kInteger, "NOT NULL"}, {"node_id", I::kInteger, "NOT NULL"},
                               {"time_ns", I::kInteger, "NOT NULL"},   {"value", I::kReal, ""}};
constexpr Column kFlows[] = {{"flow_id", I::kInteger, "PRIMARY KEY"}, {"from_span_id", I::kInteger, "NOT NULL"},
                             {"to_span_id", I::kInteger, "NOT NULL"}, {"category", I::kText, "NOT NULL"},
                             {"correlation_id", I::kInteger, "NOT NULL"}};
constexpr Column kRules[] = {{"rule", I::kText, "PRIMARY KEY"},      {"triggered", I::kInteger, "NOT NULL"},
                             {"violations", I::kInteger, "NOT NULL"}, {"datapoints", I::kInteger, "NOT NULL"},
                             {"last_trigger_ns", I::kInteger, ""},   {"reporting", I::kInteger, "NOT NULL"},
                             {"parameters", I::kText, "NOT NULL"},   {"description", I::kText, "NOT NULL"},
                             {"recommendation", I::kText, "NOT NULL"}, {"details", I::kText, "NOT NULL"}};
constexpr Column kFindings[] = {{"finding_id", I::kText, "NOT NULL"},   {"rule", I::kText, "NOT NULL"},
                                {"severity", I::kText, "NOT NULL"},     {"title", I::kText, "NOT NULL"},
                                {"recommendation", I::kText, "NOT NULL"}, {"next_step", I::kText, "NOT NULL"},
                                {"estimated_saving", I::kReal, ""},     {"saving_basis", I::kText, "NOT NULL"},
                                {"node", I::kText, ""},                 {"start_ns", I::kInteger, ""},
                                {"end_ns", I::kInteger, ""},            {"evidence", I::kText, "NOT NULL"}};

constexpr TableSchema kSchema[] = {
    {"runs", kRuns},       {"nodes", kNodes},     {"processes", kProcesses}, {"threads", kThreads},
    {"strings", kStrings}, {"spans", kSpans},     {"steps", kSteps},         {"metrics", kMetrics},
    {"samples", kSamples}, {"flows", kFlows},     {"rules", kRules},         {"findings", kFindings},
};
enum TableIndex { kRunsTable, kNodesTable, kProcessesTable, kThreadsTable, kStringsTable, kSpansTable,
                  kStepsTable, kMetricsTable, kSamplesTable, kFlowsTable, kRulesTable, kFindingsTable };

std::string Quote(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// {"key":value,...} of an event's args; "" when it has none (the column is then NULL).
std::string ArgsJson(const Model& model, const FrameworkEvent& event) {
  std::string json;
  for (const EventArg& arg : model.Args(event)) {
    json += json.empty() ? "{" : ",";
    json += Quote(model.String(arg.key));
    json += ':';
    switch (arg.type) {
      case EventArg::Type::kInt: json += std::to_string(arg.int_value); break;
      case EventArg::Type::kDouble: {
        if (!std::isfinite(arg.double_value)) {
          json += "null";
          break;
        }
        char digits[32];
        auto [end, error] = std::to_chars(digits, digits + sizeof digits, arg.double_value);
        json.append(digits, end);
        break;
      }
      case EventArg::Type::kString: json += Quote(model.String(arg.string_value)); break;
      case EventArg::Type::kBool: json += arg.int_value != 0 ? "true" : "false"; break;
    }
  }
  if (!json.empty()) json += '}';
  return json;
}

const char* KindName(EventKind kind) {
  switch (kind) {
    case EventKind::kSpan: return "span";
    case EventKind::kInstant: return "instant";
    case EventKind::kCounter: return "counter";
  }
  return "span";
}

Cell IntOrNull(int64_t value, bool present) { return present ? Cell::Int(value) : Cell::Null(); }

class TablesWriter {
 public:
  TablesWriter(const Model& model, const ExportRunFacts& facts, TableSink& sink)
      : model_(model), facts_(facts), sink_(sink) {}

  StatusOr<ExportCounts> Write() {
    const TrackLayout layout = LayoutTracks(model_);
    STEPSCOPE_RETURN_IF_ERROR(WriteRun());
    STEPSCOPE_RETURN_IF_ERROR(WriteNodes());
    STEPSCOPE_RETURN_IF_ERROR(WriteThreads(layout));
    STEPSCOPE_RETURN_IF_ERROR(WriteStrings());
    STEPSCOPE_RETURN_IF_ERROR(WriteSpans(layout));
    STEPSCOPE_RETURN_IF_ERROR(WriteSteps());
    STEPSCOPE_RETURN_IF_ERROR(WriteSamples());
    STEPSCOPE_RETURN_IF_ERROR(WriteFlows());
    STEPSCOPE_RETURN_IF_ERROR(WriteRules());
    return counts_;
  }

 private:
  Status Row(std::initializer_list<Cell> cells) { return sink_.AddRow(std::span<const Cell>(cells.begin(), cells.size())); }

  Status WriteRun() {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kRunsTable]));
    const bool has_data = model_.first_ns() != 0 || model_.last_ns() != 0;
    const std::string problems = Dump(analysis::ProblemsToJson(model_.problems()));
    STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(1), Cell::Text(facts_.run_path), Cell::Text(facts_.job),
                                   Cell::Text(analysis::ModelSourceName(model_.source())),
                                   IntOrNull(model_.first_ns(), has_data), IntOrNull(model_.last_ns(), has_data),
                                   IntOrNull(model_.complete_until_ns(), has_data), Cell::Text(facts_.findings_origin),
                                   Cell::Int(kExportSchemaVersion), Cell::Text(problems)}));
    return sink_.EndTable();
  }

  Status WriteNodes() {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kNodesTable]));
    for (size_t i = 0; i < model_.nodes().size(); ++i) {
      const analysis::NodeFacts& node = model_.nodes()[i];
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Text(node.name),
                                     node.instance_type.empty() ? Cell::Null() : Cell::Text(node.instance_type),
                                     IntOrNull(node.instance_count, node.instance_count > 0),
                                     IntOrNull(node.cpu_cores, node.cpu_cores > 0),
                                     IntOrNull(node.gpu_count, node.gpu_count > 0)}));
    }
    return sink_.EndTable();
  }

  Status WriteThreads(const TrackLayout& layout) {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kProcessesTable]));
    for (size_t i = 0; i < layout.processes.size(); ++i) {
      const auto& [node, pid] = layout.processes[i];
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(node), Cell::Int(pid)}));
    }
    STEPSCOPE_RETURN_IF_ERROR(sink_.EndTable());
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kThreadsTable]));
    const TraceNames names(model_);
    for (size_t i = 0; i < layout.threads.size(); ++i) {
      const ThreadKey& thread = layout.threads[i];
      const std::string name = names.Thread(thread, 0);
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(layout.process_of_thread[i]),
                                     Cell::Int(thread.node), Cell::Int(thread.pid), Cell::Int(thread.tid),
                                     IntOrNull(thread.device, thread.device >= 0), Cell::Text(name)}));
    }
    return sink_.EndTable();
  }

  Status WriteStrings() {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kStringsTable]));
    for (size_t i = 0; i < model_.strings().size(); ++i) {
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)),
                                     Cell::Text(model_.String(static_cast<analysis::StringId>(i)))}));
    }
    return sink_.EndTable();
  }

  Status WriteSpans(const TrackLayout& layout) {
    const auto& events = model_.events();
    is_step_.assign(events.size(), false);
    for (uint32_t index : model_.steps()) is_step_[index] = true;
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kSpansTable]));
    for (size_t i = 0; i < events.size(); ++i) {
      const FrameworkEvent& event = events[i];
      const std::string args = ArgsJson(model_, event);
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(layout.event_thread[i]),
                                     Cell::Int(event.node), Cell::Text(KindName(event.kind)), Cell::Int(event.start_ns),
                                     Cell::Int(event.end_ns), Cell::Int(event.duration_ns()), Cell::Int(event.phase),
                                     Cell::Int(event.name), Cell::Int(event.category),
                                     IntOrNull(event.step, is_step_[i]), Cell::Int(event.unfinished ? 1 : 0),
                                     args.empty() ? Cell::Null() : Cell::Text(args)}));
      ++counts_.spans;
    }
    return sink_.EndTable();
  }

  Status WriteSteps() {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kStepsTable]));
    int64_t step_id = 0;
    for (uint32_t index : model_.steps()) {
      const FrameworkEvent& event = model_.events()[index];
      const std::string_view phase = analysis::StepPhaseName(model_.StepPhaseOf(event));
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(step_id++), Cell::Int(index), Cell::Int(event.node), Cell::Text(phase),
                                     Cell::Int(event.step), Cell::Int(event.start_ns), Cell::Int(event.end_ns),
                                     Cell::Int(event.duration_ns())}));
      ++counts_.steps;
    }
    return sink_.EndTable();
  }

  Status WriteSamples() {
    const auto& all = model_.series();
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kMetricsTable]));
    for (size_t i = 0; i < all.size(); ++i) {
      const analysis::SystemSeries& series = all[i];
      const std::string metric = std::string(model_.String(series.type)) + "/" + std::string(model_.String(series.name)) +
                                 "/" + std::string(model_.String(series.dimension));
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(series.node),
                                     Cell::Text(model_.String(series.type)), Cell::Text(model_.String(series.name)),
                                     Cell::Text(model_.String(series.dimension)), Cell::Text(metric),
                                     Cell::Int(static_cast<int64_t>(series.time_ns.size()))}));
    }
    STEPSCOPE_RETURN_IF_ERROR(sink_.EndTable());
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kSamplesTable]));
    for (size_t i = 0; i < all.size(); ++i) {
      const analysis::SystemSeries& series = all[i];
      for (size_t j = 0; j < series.time_ns.size(); ++j) {
        const double value = series.value[j];
        STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(series.node),
                                       Cell::Int(series.time_ns[j]),
                                       std::isfinite(value) ? Cell::Real(value) : Cell::Null()}));
        ++counts_.samples;
      }
    }
    return sink_.EndTable();
  }

  Status WriteFlows() {
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kFlowsTable]));
    for (size_t i = 0; i < model_.flows().size(); ++i) {
      const analysis::Flow& flow = model_.flows()[i];
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Int(static_cast<int64_t>(i)), Cell::Int(flow.from), Cell::Int(flow.to),
                                     Cell::Text(model_.String(flow.category)), Cell::Int(flow.id)}));
    }
    return sink_.EndTable();
  }

  // Both tables exist (empty) when there is no rules document.
  Status WriteRules() {
    const nlohmann::json rules = JsonArray(facts_.rules, "rules");
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kRulesTable]));
    for (const nlohmann::json& rule : rules) {
      const int64_t last_trigger_ns = JsonInt(rule, "last_trigger_ns", -1);
      const std::string name = JsonString(rule, "Rule"), parameters = JsonString(rule, "RuleParameters"),
                        description = JsonString(rule, "description"),
                        recommendation = JsonString(rule, "recommendation"), details = Dump(JsonObject(rule, "Details"));
      STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Text(name), Cell::Int(JsonInt(rule, "RuleTriggered", 0)),
                                     Cell::Int(JsonInt(rule, "Violations", 0)), Cell::Int(JsonInt(rule, "Datapoints", 0)),
                                     IntOrNull(last_trigger_ns, last_trigger_ns >= 0),
                                     Cell::Int(JsonBool(rule, "reporting", false) ? 1 : 0), Cell::Text(parameters),
                                     Cell::Text(description), Cell::Text(recommendation), Cell::Text(details)}));
    }
    STEPSCOPE_RETURN_IF_ERROR(sink_.EndTable());
    STEPSCOPE_RETURN_IF_ERROR(sink_.BeginTable(kSchema[kFindingsTable]));
    for (const nlohmann::json& rule : rules) {
      for (const nlohmann::json& finding : JsonArray(rule, "findings")) {
        const nlohmann::json evidence = JsonArray(finding, "evidence");
        const nlohmann::json first = evidence.empty() ? nlohmann::json::object() : evidence.front();
        const bool located = !evidence.empty();
        const nlohmann::json* saving = JsonField(finding, "estimated_saving");
        const std::string id = JsonString(finding, "id"), rule_name = JsonString(finding, "rule", JsonString(rule, "Rule")),
                          severity = JsonString(finding, "severity"), title = JsonString(finding, "title"),
                          recommendation = JsonString(finding, "recommendation"),
                          next_step = JsonString(finding, "next_step"), basis = JsonString(finding, "saving_basis"),
                          node = JsonString(first, "node"), evidence_json = Dump(evidence);
        STEPSCOPE_RETURN_IF_ERROR(Row({Cell::Text(id), Cell::Text(rule_name), Cell::Text(severity), Cell::Text(title),
                                       Cell::Text(recommendation), Cell::Text(next_step),
                                       saving != nullptr && saving->is_number() ? Cell::Real(saving->get<double>()) : Cell::Null(),
                                       Cell::Text(basis), located ? Cell::Text(node) : Cell::Null(),
                                       IntOrNull(JsonInt(first, "start_ns", 0), located),
                                       IntOrNull(JsonInt(first, "end_ns", 0), located), Cell::Text(evidence_json)}));
        ++counts_.findings;
      }
    }
    return sink_.EndTable();
  }

  const Model& model_;
  const ExportRunFacts& facts_;
  TableSink& sink_;
  std::vector<bool> is_step_;
  ExportCounts counts_;
};

}  // namespace

std::span<const TableSchema> ExportSchema() { return kSchema; }

std::string CreateTableSql(const TableSchema& table) {
  std::string sql = std::string("CREATE TABLE ") + table.name + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const Column& column = table.columns[i];
    if (i > 0) sql += ", ";
    sql += column.name;
    sql += column.type == ColumnType::kInteger ? " INTEGER" : column.type == ColumnType::kReal ? " REAL" : " TEXT";
    if (column.constraint[0] != '\0') {
      sql += ' ';
      sql += column.constraint;
    }
  }
  return sql + ")";
}

StatusOr<ExportCounts> WriteTables(const Model& model, const ExportRunFacts& facts, TableSink& sink) {
  return TablesWriter(model, facts, sink).Write();
}

}  // namespace stepscope::exporting
