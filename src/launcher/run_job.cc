#include "launcher/run_job.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>

#include "base/file_system.h"
#include "launcher/child_process.h"
#include "launcher/control_watcher.h"
#include "launcher/finished_outputs.h"
#include "launcher/gpu_tracing_injection.h"
#include "launcher/job_metrics.h"
#include "launcher/online_rules.h"
#include "launcher/python_startup.h"
#include "launcher/run_directory_claim.h"
#include "launcher/run_manifest.h"
#include "store/run_manifest.h"
#include "launcher/system_stream_sink.h"
#include "launcher/torchrun_command.h"
#include "platform/cupti/cupti_probe.h"
#include "platform/linux/host_constants.h"
#include "platform/linux/proc_file_system.h"
#include "platform/nvml/gpu_capability.h"
#include "platform/nvml/nvml_loader.h"
#include "platform/perf/perf_counter_set.h"
#include "sampler/linux_sources.h"
#include "sampler/nvml_gpu_source.h"
#include "sampler/perf_counter_source.h"
#include "sampler/process_tree_source.h"
#include "sampler/system_sampler.h"
#include "store/stream_reader.h"

namespace stepscope::launcher {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "train" for `python3 -u train.py`, "mypkg.main" for `python -m mypkg.main`, else the program.
std::string ScriptName(const std::vector<std::string>& command) {
  std::string program = BaseName(command[0]);
  if (program.rfind("python", 0) == 0) {
    for (size_t i = 1; i < command.size(); ++i) {
      if (command[i] == "-m" && i + 1 < command.size()) return command[i + 1];
      if (command[i] == "-c") return "python-c";
      if (!command[i].empty() && command[i][0] != '-') {
        std::string script = BaseName(command[i]);
        if (script.size() > 3 && script.compare(script.size() - 3, 3, ".py") == 0) script.resize(script.size() - 3);
        return script;
      }
    }
  }
  return program;
}

std::string UtcStamp(int64_t realtime_ns) {
  time_t seconds = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm utc;
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string AbsolutePath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) return resolved;
  return path;
}

nlohmann::json Versions() {
  utsname uts;
  uname(&uts);
  return {{"stepscope", STEPSCOPE_VERSION}, {"kernel", std::string(uts.sysname) + " " + uts.release},
          {"machine", uts.machine}};
}

void PrintError(const std::string& message) { std::fprintf(stderr, "stepscope run: %s\n", message.c_str()); }

// Multi-node tests skew one node's clock on purpose (STEPSCOPE_TEST_CLOCK_SKEW_NS, signed ns):
// every time the node records is then off by that much, as a machine whose clock is wrong, and
// the analysis must align it from the measured offset (docs/multi-node.md). 0 when unset.
int64_t InjectedClockSkewNs() {
  const char* text = std::getenv("STEPSCOPE_TEST_CLOCK_SKEW_NS");
  return text == nullptr ? 0 : std::strtoll(text, nullptr, 10);
}

}  // namespace

int RunJob(const RunConfig& config, const std::vector<std::string>& command, const FinishedRunHandler& finished_run) {
  if (command.empty()) return PrintError("no command to run"), kExitUsage;
  const ClockPair anchor = ReadClockPair();
  const int64_t clock_skew_ns = InjectedClockSkewNs();
  const int64_t realtime_anchor_ns = static_cast<int64_t>(RealtimeNowNs()) + clock_skew_ns;
  const std::string host = HostName();
  const std::string job_or_default =
      config.job.empty() ? ScriptName(command) + "-" + UtcStamp(realtime_anchor_ns) : config.job;
  const std::string node = config.node.empty() ? host : config.node;
  if (Status status = ValidateName("node id", node); !status.ok()) return PrintError(status.message() + " (pass --node)"), kExitUsage;
  if (Status status = ValidateName("job name", job_or_default); !status.ok()) {
    return PrintError(status.message() + " (pass --job)"), kExitUsage;
  }

  // Capabilities: what this machine lets stepscope see. Missing pieces are facts, not errors.
  auto nvml = NvmlLoader::Load();
  GpuCapability gpu = DescribeGpuCapability(nvml);
  CuptiCapability cupti = ProbeCupti();
  const std::optional<int> perf_paranoid = ReadPerfParanoidLevel(LocalFileSystem());
  store::ManifestCapabilities capabilities;
  capabilities.gpu_available = gpu.available;
  capabilities.gpu_reason = gpu.reason;
  capabilities.gpu_driver_version = gpu.driver_version;
  capabilities.gpus = gpu.gpu_names;
  capabilities.nvml_available = nvml.ok();
  capabilities.nvml_reason = nvml.ok() ? "" : nvml.status().message();
  capabilities.cupti_library_found = cupti.library_found;
  capabilities.cupti_library = cupti.library;
  capabilities.cupti_version = cupti.version;
  capabilities.cupti_usable = cupti.library_found && gpu.available;
  capabilities.cupti_reason = !cupti.reason.empty() ? cupti.reason : (gpu.available ? "" : "no GPU to trace");
  // Counting per CPU may not be permitted while counting the job is: the counters are opened,
  // and recorded, once the job runs (RecordPerfCounters below).
  capabilities.perf_paranoid = perf_paranoid.value_or(-1);
  capabilities.perf_reason = "not opened yet: stepscope run opens the counters once the job has started";
  capabilities.tick_clock = CurrentTickSource() == TickSource::kTsc ? "tsc" : "monotonic_ns";
  // The package this command came with: the job's fallback instrumentation and the GPU tracer.
  const std::string own_package_parent = FindOwnPythonPackageParent();
  const char* existing_injection = std::getenv("CUDA_INJECTION64_PATH");
  const GpuTracingPlan gpu_tracing = PlanGpuTracing({config.gpu_tracing, gpu.available, cupti.library_found,
                                                     cupti.reason, own_package_parent,
                                                     existing_injection != nullptr ? existing_injection : ""});
  capabilities.gpu_tracing = gpu_tracing.mode;
  capabilities.gpu_tracing_reason = gpu_tracing.reason;

  const nlohmann::json versions = Versions();
  auto start_manifest = [&](const std::string& job_name) {
    ManifestStart start{job_name, node, host, command, &config, anchor, realtime_anchor_ns, capabilities,
                        versions};
    store::RunManifest started = StartManifest(start);
    const TorchrunShape shape = ParseTorchrunCommand(command);
    started.nodes_expected = shape.nodes_expected;
    started.node_rank = shape.node_rank;
    return started;
  };
  // The node directory becomes this launcher's with its first manifest; another launcher's
  // (the same default job name in the same second, or the same --job) is never written.
  auto claim = ClaimRunDirectory({config.out, job_or_default, node, config.job.empty()},
                                 [&](const std::string& job_name) { return store::ManifestText(start_manifest(job_name)); });
  if (!claim.ok()) return PrintError(claim.status().message()), kExitSetup;
  const std::string& job = claim->job;
  const std::string node_dir = AbsolutePath(claim->node_dir);
  const std::string run_dir = AbsolutePath(config.out + "/" + job);
  store::RunManifest manifest = start_manifest(job);

  nlohmann::json system_meta = {{"kind", "system"}, {"pid", static_cast<int64_t>(getpid())},
                                {"ppid", static_cast<int64_t>(getppid())},
                                {"format_version", store::kFormatVersion},
                                {"tick_source", capabilities.tick_clock},
                                {"ticks_per_ns", MeasureTicksPerNs(2'000'000)},
                                {"clock_anchor", {{"monotonic_ns", anchor.monotonic_ns}, {"realtime_ns", realtime_anchor_ns}}},
                                {"interval_ns", config.interval_ns}};
  auto sink = SystemStreamSink::Create(node_dir, system_meta.dump(), anchor);
  if (!sink.ok()) {
    PrintError(sink.status().message() + "; choose a writable --out with free space");
    return kExitSetup;
  }

  // The job's Python processes read the resolved config from here (stepscope/_config.py).
  const std::string config_path = node_dir + "/config.json";
  if (Status status = WriteFileAtomically(config_path, RunConfigToJson(config, job, node).dump(2) + "\n"); !status.ok()) {
    PrintError(status.message() + "; choose a writable --out");
    return kExitSetup;
  }
  std::vector<std::string> child_environment = {"STEPSCOPE_NODE_DIR=" + node_dir, "STEPSCOPE_RUN_DIR=" + run_dir,
                                                "STEPSCOPE_JOB=" + job, "STEPSCOPE_NODE=" + node,
                                                "STEPSCOPE_CONFIG=" + config_path,
                                                std::string("STEPSCOPE_LAUNCHER_VERSION=") + STEPSCOPE_VERSION,
                                                std::string("STEPSCOPE_TORCH=") + (config.torch ? "1" : "0")};
  auto python_startup = WritePythonStartup(node_dir, own_package_parent);
  if (python_startup.ok()) {
    child_environment.push_back("PYTHONPATH=" + ChildPythonPath(*python_startup, std::getenv("PYTHONPATH")));
  } else {
    PrintError("automatic PyTorch instrumentation is off: " + python_startup.status().message());
  }
  for (const std::string& variable : gpu_tracing.environment) child_environment.push_back(variable);
  if (gpu_tracing.mode == "off" && config.gpu_tracing != "off" && gpu.available) {
    PrintError("GPU tracing is off: " + gpu_tracing.reason);
  }

  std::fprintf(stderr, "stepscope: run directory %s\n", run_dir.c_str());
  InstallSignalForwarding();
  auto child = ChildProcess::Spawn(command, child_environment);
  if (!child.ok()) {
    PrintError(child.status().message());
    manifest.status = store::ManifestStatus::kFailedToStart;
    manifest.ended = child.status().message();
    (void)WriteManifest(node_dir, manifest);
    return kExitCannotExecute;
  }
  child->ForwardTerminationSignals();
  // Opened before the job forks DataLoader workers, so that counting the job's processes
  // (when per CPU is not permitted) inherits into them.
  PerfCounterOptions perf_options;
  perf_options.cpus = OnlineCpus(LocalFileSystem());
  perf_options.job_pid = child->pid();
  perf_options.paranoid_level = perf_paranoid;
  PerfCounterSet perf_counters = PerfCounterSet::Open(SystemPerfEventApi(), perf_options);
  RecordPerfCounters(manifest.capabilities, perf_counters, perf_paranoid);
  RecordChildStarted(manifest, getpid(), child->pid());
  (void)WriteManifest(node_dir, manifest);

  // Keeps /proc files open between polls: re-reading an open /proc file costs far less than
  // opening it again, which keeps the sampler under its CPU bar.
  ProcFileSystem fs;
  LinuxSourcesOptions source_options;
  source_options.job_root_pid = child->pid();
  source_options.host = HostConstants::FromSysconf();
  // The Prometheus endpoint (--metrics-port) sees every poll the run's system stream gets.
  std::unique_ptr<JobMetrics> metrics;
  SampleSink* sampler_sink = sink->get();
  if (config.metrics_port >= 0) {
    auto started = JobMetrics::Start({job, node, STEPSCOPE_VERSION, static_cast<double>(realtime_anchor_ns) / 1e9},
                                     config.metrics_host, config.metrics_port);
    if (started.ok()) {
      metrics = std::move(*started);
      sampler_sink = metrics->Tee(sampler_sink);
      manifest.metrics_url = "http://" + config.metrics_host + ":" + std::to_string(metrics->port()) + "/metrics";
      std::fprintf(stderr, "stepscope: Prometheus metrics on %s\n", manifest.metrics_url.c_str());
      if (Status status = WriteManifest(node_dir, manifest); !status.ok()) PrintError(status.message());
    } else {
      PrintError("Prometheus metrics are off: " + started.status().message());
    }
  }
  SystemSampler sampler(sampler_sink, config.interval_ns, [](std::string_view source, const Status& status) {
    std::fprintf(stderr, "stepscope: %.*s metrics: %s\n", static_cast<int>(source.size()), source.data(),
                 status.message().c_str());
  });
  const ProcessTreeSource* job_tree = nullptr;
  for (auto& source : CreateLinuxSources(fs, source_options)) {
    if (const auto* tree = dynamic_cast<const ProcessTreeSource*>(source.get())) job_tree = tree;
    sampler.AddSource(std::move(source));
  }
  const NvmlGpuSource* gpu_source = nullptr;  // owned by the sampler
  if (nvml.ok()) {
    auto source = std::make_unique<NvmlGpuSource>(std::move(*nvml));
    // Per-process GPU metrics for the job's processes only. The tree source is polled before
    // it on the same sampler thread, and both live as long as the sampler.
    if (job_tree != nullptr) {
      source->SetJobPidFilter([job_tree](uint32_t pid) {
        return pid <= static_cast<uint32_t>(INT32_MAX) && job_tree->IsMember(static_cast<int32_t>(pid));
      });
    }
    gpu_source = source.get();
    sampler.AddSource(std::move(source));
  }
  if (perf_counters.any_counted()) sampler.AddSource(std::make_unique<PerfCounterSource>(std::move(perf_counters)));
  if (Status status = sampler.Start(); !status.ok()) PrintError("system metrics are off: " + status.message());

  // `stepscope ctl` changes: the watcher owns the manifest until Stop() (the main thread only
  // waits for the child meanwhile).
  ControlWatcher control_watcher(
      node_dir, config.interval_ns, [&sampler](int64_t interval_ns) { return sampler.SetInterval(interval_ns); },
      [&manifest, &node_dir](const nlohmann::json& entry) {
        manifest.control.push_back(store::ManifestControlFromJson(entry));
        if (Status status = WriteManifest(node_dir, manifest); !status.ok()) PrintError(status.message());
      });
  if (Status status = control_watcher.Start(); !status.ok()) PrintError("`stepscope ctl` is off: " + status.message());

  // The rules evaluate the node's directory every scan interval into <job>/<node>/rules/
  // (online_rules.h); the job's come at the end (finished_outputs.h).
  std::unique_ptr<OnlineRules> online_rules =
      StartOnlineRules(node_dir, config.rules, config.rule_overrides,
                       config.prices.empty() ? nullptr : &config.price_catalog,
                       [](const std::string& line) { PrintError(line); },
                       metrics == nullptr ? OnlineRules::PassObserver()
                                          : [&metrics](const analysis::Model& model, const rules::ProfilerReport& report) {
                                              metrics->ObservePass(model, report);
                                            });

  ChildExit exit = child->Wait();
  control_watcher.Stop();
  const int64_t end_realtime_ns = static_cast<int64_t>(RealtimeNowNs()) + clock_skew_ns;
  sampler.Stop();
  // What NVML left out is known once the sampler has polled (an unsupported reading shows at
  // its first call).
  if (gpu_source != nullptr) manifest.capabilities.gpu_metrics_absent = gpu_source->AbsentMetrics();
  Status finished = (*sink)->Finish();
  if (!finished.ok()) PrintError("writing the last system samples failed: " + finished.message());
  const uint64_t samples_written = (*sink)->samples_written();
  const uint64_t samples_dropped = (*sink)->samples_dropped();
  sink->reset();  // releases the system ring so it is compacted with the others

  // Fold every finished process's ring into its log so the run is compact at rest.
  std::vector<std::string> still_running;
  if (auto streams = store::ListStreams(node_dir); streams.ok()) {
    manifest.streams_listed = true;  // readers then call a missing one lost, not absent
    manifest.streams = *streams;
    for (const std::string& name : *streams) {
      Status compacted = store::CompactStream(node_dir, name);
      if (compacted.code() == StatusCode::kUnavailable) still_running.push_back(name);
      else if (!compacted.ok()) PrintError(compacted.message());
    }
  }
  SamplerStats sampler_stats = sampler.Stats();
  RecordChildEnded(manifest, exit, end_realtime_ns);
  manifest.sampler = {true,
                      sampler_stats.polls,
                      sampler_stats.missed_polls,
                      samples_written,
                      samples_dropped,
                      static_cast<uint64_t>(sampler_stats.thread_cpu_ns),
                      sampler.interval_ns()};
  manifest.streams_still_written = still_running;
  if (Status status = WriteManifest(node_dir, manifest); !status.ok()) PrintError(status.message());
  // Last, on the final data: the files then equal `stepscope rules` of the node and of the job.
  // Decided after this node's final manifest is written (finished_outputs.h).
  const FinishedOutputs outputs = PlanFinishedOutputs(run_dir, node);
  if (online_rules) online_rules->Finish(outputs.only_node ? run_dir + "/rules" : "");
  if (!outputs.only_node && outputs.last_node) {
    Status evaluated = EvaluateRulesOnce(run_dir, config.rules, config.rule_overrides,
                                         config.prices.empty() ? nullptr : &config.price_catalog);
    if (!evaluated.ok()) {
      PrintError("the job's rules were not written: " + evaluated.message() + "; run `stepscope rules " + run_dir + "`");
    }
  }
  if (finished_run) {
    finished_run({run_dir, node_dir, /*node_report=*/!outputs.only_node, /*job_report=*/outputs.last_node,
                  outputs.unfinished_nodes});
  }

  std::fprintf(stderr, "stepscope: job %s after %.1f s; %llu system samples; run directory %s\n",
               exit.Describe().c_str(), static_cast<double>(end_realtime_ns - realtime_anchor_ns) / 1e9,
               static_cast<unsigned long long>(samples_written), run_dir.c_str());
  return exit.LauncherExitCode();
}

}  // namespace stepscope::launcher
