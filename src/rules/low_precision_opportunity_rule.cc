// LowPrecisionOpportunity (RULES.md §native): matrix kernels (GEMM, convolution) computing in
// FP32 on a GPU with tensor cores. Tensor cores run the same products several times faster in
// TF32, BF16 or FP16; PyTorch leaves FP32 matmuls off them by default.
//
// Per (node, GPU), over every kernel of the run: the time of matrix kernels by precision (the
// precision their names state, analysis/kernel_precision.h; a matrix kernel is one whose name
// says GEMM, convolution or a cuDNN/xmma engine, IsMatrixKernel below) and its share of the GPU's
// compute kernel time (NCCL's kernels left out: they wait for the other ranks). FP32 matrix
// kernels whose names say they already run on tensor cores ("cutlass_80_tensorop_s1688gemm",
// whose FP32 may be emulated with TF32) are kept apart and are no opportunity: conservative,
// since a name cannot tell emulated FP32 from TF32 that is already allowed. Over the steps
// with work on the GPU (step_device_work.h), the FP32 matrix time inside them as a share of step
// time: the potential, if that work took no time at all.
// Whether the GPU has tensor cores: gpu_architecture.h's IdentifyGpu, from the run's GPU names,
// its instance type, the architecture its kernels were built for, or a kernel that ran on them.
// Triggers when FP32 matrix kernels take more than `threshold_pct` % of the compute kernel time
// and the GPU has tensor cores. When that is not established (an unknown GPU) the finding is
// informational, says so, and claims no saving; a GPU known to lack tensor cores gives none.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/gpu_idle_attribution.h"
#include "analysis/kernel_precision.h"
#include "rules/builtin_rules.h"
#include "rules/gpu_architecture.h"
#include "rules/step_device_work.h"

namespace stepscope::rules {
namespace {

constexpr size_t kExampleChars = 60;

// GEMMs (cuBLAS "ampere_sgemm", CUTLASS "s1688gemm", implicit-GEMM convolutions), cuDNN's
// convolution kernels ("scudnn", "xmma_fprop", "dgrad_engine", "wgrad_alg0_engine", winograd),
// and names that say convolution or matmul. Not GEMV (memory-bound), not FFT, not cuDNN's batch
// norm or layout kernels ("cudnn::bn_fw_tr_...", "nchwToNhwcKernel").
bool IsMatrixKernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("gemv") != std::string::npos) return false;
  for (const std::string_view token : {"gemm", "scudnn", "hcudnn", "xmma", "winograd", "fprop", "dgrad", "wgrad",
                                       "convolve", "convolution", "conv1d", "conv2d", "conv3d", "matmul"}) {
    if (lower.find(token) != std::string::npos) return true;
  }
  return false;
}

struct KernelFacts {
  analysis::KernelPrecision precision = analysis::KernelPrecision::kUnknown;
  bool matrix = false;
  bool tensor_cores = false;  // its name says it runs on tensor cores
  bool communication = false;
  GpuArchitecture architecture = GpuArchitecture::kUnknown;
};

struct Totals {
  int32_t rank = -1;
  int64_t kernel_ns = 0;  // compute kernels (not NCCL)
  std::array<int64_t, analysis::kKernelPrecisionCount> matrix_ns{};  // by KernelPrecision
  int64_t fp32_tensor_core_ns = 0;  // of matrix_ns[FP32], kernels already on tensor cores
  int64_t fp32_matrix_launches = 0;  // the others: the opportunity
  std::map<std::string, KernelTotal> fp32_matrix_kernels;
  KernelEvidence kernel_evidence;  // what the GPU's kernels say of it
  int64_t steps = 0;
  int64_t step_ns = 0;
  int64_t fp32_matrix_step_ns = 0;  // FP32 matrix kernel time inside those steps
  int64_t first_ns = INT64_MAX;
  int64_t last_ns = 0;

  // FP32 matrix kernels that do not run on tensor cores.
  int64_t fp32_matrix_ns() const {
    return matrix_ns[static_cast<int>(analysis::KernelPrecision::kFp32)] - fp32_tensor_core_ns;
  }
};

struct NodeGpus {
  std::vector<std::string> names;  // the run's capabilities, or an import's recorded models
  std::string instance_type;
  bool imported_names_read = false;  // manifest_json parsed once, not every window
};

// The GPU models an importer recorded in the node's manifest_json ("gpus", the Kineto importer
// from deviceProperties); empty names (a device without one) are left out.
std::vector<std::string> ImportedGpuNames(const std::string& manifest_json) {
  const nlohmann::json manifest = nlohmann::json::parse(manifest_json, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  if (!manifest.is_object()) return names;
  const auto gpus = manifest.find("gpus");
  if (gpus == manifest.end() || !gpus->is_array()) return names;
  for (const nlohmann::json& name : *gpus) {
    if (name.is_string() && !name.get<std::string>().empty()) names.push_back(name.get<std::string>());
  }
  return names;
}

class LowPrecisionOpportunityRule final : public Rule {
 public:
  LowPrecisionOpportunityRule() { parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "10"); }
  std::string_view name() const override { return "LowPrecisionOpportunity"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    for (uint32_t node = 0; node < model.nodes().size(); ++node) {
      const analysis::NodeFacts& facts = model.nodes()[node];
      NodeGpus& gpus = node_gpus_[node];
      const std::vector<std::string>& names = facts.manifest.capabilities.gpus;
      if (facts.has_manifest && !names.empty()) gpus.names = names;
      if (!facts.has_manifest && !gpus.imported_names_read && !facts.manifest_json.empty()) {
        gpus.names = ImportedGpuNames(facts.manifest_json);  // Kineto's deviceProperties names
        gpus.imported_names_read = true;
      }
      if (!facts.instance_type.empty()) gpus.instance_type = facts.instance_type;
    }
    std::unordered_map<analysis::StringId, KernelFacts> kernel_facts;  // this model's kernel names
    auto facts_of = [&](const analysis::FrameworkEvent& event) -> const KernelFacts& {
      auto [found, inserted] = kernel_facts.try_emplace(event.name);
      if (inserted) {
        const std::string_view kernel = model.String(event.name);
        found->second = {analysis::PrecisionFromKernelName(kernel).precision, IsMatrixKernel(kernel),
                         KernelRunsOnTensorCores(kernel), analysis::IsCommunicationKernel(kernel),
                         ArchitectureFromKernelName(kernel)};
      }
      return found->second;
    };
    const auto& events = model.events();
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const analysis::FrameworkEvent& event = events[i];
      if (!DeviceWorkOf(model, event)) continue;
      gpu_data_ = true;
      if (DeviceWorkOf(model, event) != analysis::GpuWork::kKernel) continue;
      const KernelFacts& facts = facts_of(event);
      Totals& totals = totals_[{event.node, event.device}];
      KernelEvidence& evidence = totals.kernel_evidence;
      if (facts.architecture > evidence.bound) {
        evidence.bound = facts.architecture;
        evidence.example = Shortened(model.String(event.name));
      }
      if (facts.tensor_cores && !evidence.tensor_cores) {
        evidence.tensor_cores = true;
        evidence.tensor_core_example = Shortened(model.String(event.name));
      }
      if (facts.communication) continue;
      totals.kernel_ns += event.duration_ns();
      totals.first_ns = std::min(totals.first_ns, event.start_ns);
      totals.last_ns = std::max(totals.last_ns, event.end_ns);
      if (!facts.matrix) continue;
      totals.matrix_ns[static_cast<int>(facts.precision)] += event.duration_ns();
      if (facts.precision != analysis::KernelPrecision::kFp32) continue;
      if (facts.tensor_cores) {
        totals.fp32_tensor_core_ns += event.duration_ns();
        continue;
      }
      ++totals.fp32_matrix_launches;
      KernelTotal& kernel = totals.fp32_matrix_kernels[std::string(model.String(event.name))];
      ++kernel.launches;
      kernel.total_ns += event.duration_ns();
    }
    if (!gpu_data_) return false;
    for (const StepDeviceWork& step_work : CollectStepDeviceWork(window)) {
      for (const auto& [device, work] : step_work.work) {
        Totals& totals = totals_[{step_work.step.node, device}];
        totals.rank = step_work.step.rank;
        ++totals.steps;
        totals.step_ns += step_work.step.duration_ns();
        for (const uint32_t index : work) {
          const analysis::FrameworkEvent& event = events[index];
          if (DeviceWorkOf(model, event) != analysis::GpuWork::kKernel) continue;
          const KernelFacts& facts = facts_of(event);
          if (facts.matrix && facts.precision == analysis::KernelPrecision::kFp32 && !facts.tensor_cores) {
            totals.fp32_matrix_step_ns += event.duration_ns();
          }
        }
      }
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report = GpuRuleReport(
        *this,
        "Checks for FP32 matrix kernels (GEMM, convolution) on GPUs whose tensor cores run them faster in TF32, BF16 "
        "or FP16.",
        "Move FP32 matrix work to the tensor cores: torch.set_float32_matmul_precision(\"high\") (TF32, Ampere or "
        "newer), or torch.autocast(\"cuda\", dtype=torch.bfloat16) (Ampere or newer; torch.float16 with "
        "torch.amp.GradScaler(\"cuda\") on Volta and Turing).",
        gpu_data_);
    if (!gpu_data_) return report;
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, device] = key;
      const std::string node_name = node_names_(node);
      const GpuIdentification gpu = Identify(node, device, totals);
      report.datapoints += totals.steps;
      const double share = totals.kernel_ns > 0 ? static_cast<double>(totals.fp32_matrix_ns()) / totals.kernel_ns : 0.0;
      const double step_share =
          totals.step_ns > 0 ? static_cast<double>(totals.fp32_matrix_step_ns) / totals.step_ns : -1.0;
      nlohmann::json by_precision = nlohmann::json::object();
      for (int p = 0; p < analysis::kKernelPrecisionCount; ++p) {
        if (totals.matrix_ns[p] > 0) {
          by_precision[analysis::KernelPrecisionName(static_cast<analysis::KernelPrecision>(p))] = totals.matrix_ns[p];
        }
      }
      nlohmann::json tensor_cores = gpu.known ? nlohmann::json(HasTensorCores(gpu.architecture)) : nlohmann::json();
      gpus.push_back({{"node", node_name},
                      {"rank", totals.rank},
                      {"gpu", device},
                      {"architecture", gpu.known ? GpuArchitectureName(gpu.architecture) : "unknown"},
                      {"architecture_source", gpu.source},
                      {"tensor_cores", tensor_cores},
                      {"kernel_ns", totals.kernel_ns},
                      {"matrix_ns_by_precision", by_precision},
                      {"fp32_matrix_ns", totals.fp32_matrix_ns()},
                      {"fp32_matrix_on_tensor_cores_ns", totals.fp32_tensor_core_ns},
                      {"fp32_matrix_launches", totals.fp32_matrix_launches},
                      {"fp32_matrix_share", share},
                      {"steps", totals.steps},
                      {"step_ns", totals.step_ns},
                      {"fp32_matrix_step_share", step_share >= 0 ? nlohmann::json(step_share) : nlohmann::json()}});
      if (totals.fp32_matrix_ns() == 0 || share <= threshold) continue;
      if (gpu.known && !HasTensorCores(gpu.architecture)) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, totals.last_ns);
      report.findings.push_back(MakeFinding(report, node_name, device, totals, gpu, share, step_share));
    }
    report.details = {{"gpu_data", true}, {"gpus", std::move(gpus)}};
    return report;
  }

 private:
  static std::string Shortened(std::string_view kernel) {
    return kernel.size() <= kExampleChars ? std::string(kernel) : std::string(kernel.substr(0, kExampleChars)) + "…";
  }

  GpuIdentification Identify(uint32_t node, int32_t device, const Totals& totals) const {
    const auto found = node_gpus_.find(node);
    static const NodeGpus kNone;
    const NodeGpus& gpus = found == node_gpus_.end() ? kNone : found->second;
    return IdentifyGpu(gpus.names, device, gpus.instance_type, totals.kernel_evidence);
  }

  Finding MakeFinding(const RuleReport& report, const std::string& node_name, int32_t device, const Totals& totals,
                      const GpuIdentification& gpu, double share, double step_share) const {
    const std::string subject = GpuSubject(node_name, totals.rank, device);
    Finding finding;
    finding.id = "LowPrecisionOpportunity/" + node_name + "/" + subject;
    finding.rule = report.rule;
    finding.severity = !gpu.known ? Severity::kInfo : share > 0.5 ? Severity::kCritical : Severity::kWarning;
    finding.title = "FP32 matrix kernels take " + FormatPercent(share) + " of the kernel time of " + subject + " on " +
                    node_name +
                    (gpu.known ? std::string(" (") + GpuArchitectureName(gpu.architecture) + ", with tensor cores)"
                               : std::string("; the GPU model is unknown, so tensor cores are not established"));
    if (gpu.known && step_share >= 0) {
      finding.estimated_saving = step_share;
      finding.saving_basis = "the FP32 matrix kernels' share of step time, at most what running them on tensor "
                             "cores can give back (TF32 and BF16 run them several times faster, not in no time)";
    } else {
      finding.saving_basis = gpu.known ? "no steps with this GPU's work: the kernels' share of step time is unknown"
                                       : "not estimated: whether the GPU has tensor cores is unknown";
    }
    if (!gpu.known) {
      finding.recommendation = "If this GPU has tensor cores (Volta or newer), " + report.recommendation;
    } else if (HasTf32AndBf16(gpu.architecture)) {
      finding.recommendation =
          "Run the FP32 matrix work on the tensor cores: torch.set_float32_matmul_precision(\"high\") (the same as "
          "torch.backends.cuda.matmul.allow_tf32 = True; convolutions follow torch.backends.cudnn.allow_tf32) computes "
          "it in TF32 with one line; torch.autocast(\"cuda\", dtype=torch.bfloat16) around the forward pass and loss "
          "runs it in BF16 and halves activation memory too.";
    } else {
      finding.recommendation =
          "Run the FP32 matrix work on the tensor cores in FP16: torch.autocast(\"cuda\", dtype=torch.float16) around "
          "the forward pass and loss, with torch.amp.GradScaler(\"cuda\") for the backward pass (this GPU's tensor "
          "cores take FP16; TF32 and BF16 need Ampere or newer).";
    }
    finding.next_step = "Make the change, run again and compare the two runs (stepscope compare); check that the "
                        "loss curve still matches.";
    Evidence evidence = GpuEvidence(
        node_name, totals.rank, "", totals.first_ns, totals.last_ns,
        std::to_string(totals.fp32_matrix_launches) + " FP32 matrix kernel launches, " +
            FormatDurationNs(totals.fp32_matrix_ns()) + " of " + FormatDurationNs(totals.kernel_ns) +
            " compute kernel time" +
            (step_share >= 0 ? " (" + FormatPercent(step_share) + " of step time)" : std::string()) + "; GPU: " +
            (gpu.known ? GpuArchitectureName(gpu.architecture) : "unknown") + ", from " + gpu.source +
            ". The largest FP32 matrix kernels:");
    evidence.top_activity = LargestKernels(totals.fp32_matrix_kernels, totals.kernel_ns);
    finding.evidence.push_back(std::move(evidence));
    return finding;
  }

  std::map<std::pair<uint32_t, int32_t>, Totals> totals_;  // (node, GPU)
  std::map<uint32_t, NodeGpus> node_gpus_;
  NodeNames node_names_;
  bool gpu_data_ = false;
};

}  // namespace

std::unique_ptr<Rule> MakeLowPrecisionOpportunityRule() { return std::make_unique<LowPrecisionOpportunityRule>(); }

}  // namespace stepscope::rules
