// Types of the report-model document (docs/report-model.md, schema "stepscope.report",
// version 1). Everything is optional on purpose: the document comes from a file the user may
// have edited or from an older stepscope, and a missing key must show as "not available",
// never as a script error.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Availability {
  available?: boolean;
  why?: string;
}

export interface Series {
  t_s?: number[];
  values?: number[];
  downsampled?: boolean;
  original_points?: number;
}

export interface RunFacts {
  job?: string;
  path?: string;
  source?: string;
  command?: string[];
  start_ns?: number;
  end_ns?: number;
  duration_s?: number;
  ended?: { code?: number | null; description?: string };
  nodes?: string[];
  // Jobs of several nodes: each node's clock against the reference node's (docs/multi-node.md).
  node_clocks?: { node?: string; state?: string; description?: string }[];
  instance_type?: string | null;
  instance_count?: number | null;
  dropped_events?: number;
  problems?: string[];
  // How the rules were evaluated; window_grid is one sentence about their windows (RULES.md §0).
  rules?: { source?: string; status?: string; windows_evaluated?: number; scan_interval_us?: number; window_grid?: string };
}

export interface Phase {
  name?: string;
  start_ns?: number;
  end_ns?: number;
  duration_s?: number;
  share?: number;
}

export interface JobSummary extends Availability {
  start_ns?: number;
  end_ns?: number;
  phases?: Phase[];
}

export interface UsageMetric {
  metric?: string;
  unit?: string;
  max?: number;
  p99?: number;
  p95?: number;
  p90?: number;
  p50?: number;
  min?: number;
}

export interface TimelineSeries extends Series {
  node?: string;
  metric?: string;
  label?: string;
  unit?: string;
}

// Every core and GPU over the job (src/report/report_sections_heatmap.h): rows of whole
// percents per time bucket, null where a device had no sample.
export interface UtilizationHeatmap {
  bucket_s?: number;
  columns?: number;
  rows?: { node?: string; device?: string; kind?: string; values?: (number | null)[] }[];
  rows_total?: number;
}

// A node's CPU performance counters (docs/report-model.md): percentiles of the node's (or its
// job's) counter rates, IPC per CPU, or why nothing was counted.
export interface CpuCounters {
  scope?: string;  // "per_cpu", "job", "none"; "" for runs from before stepscope counted events
  summary?: string;
  metrics?: UsageMetric[];
  per_cpu?: { cpu?: string; ipc?: number }[];
  why?: string;
}

export interface SystemUsage extends Availability {
  nodes?: { node?: string; metrics?: UsageMetric[]; sentences?: string[]; cpu_counters?: CpuCounters }[];
  timeline?: TimelineSeries[];
  heatmap?: UtilizationHeatmap | null;
}

export interface OperatorShare {
  self_ms?: number;  // its own time, nested operators taken out; share is of self time
  name?: string;
  total_ms?: number;
  share?: number;
  calls?: number;
}

export interface Framework extends Availability {
  phases?: Record<string, number>;
  general?: Record<string, number>;
  // DataLoader worker processes' busy time, beside the training loop: never added to general.
  workers?: { processes?: number; busy_s?: number; phases?: Record<string, number> };
  cpu_operators?: OperatorShare[];
  gpu_operators?: OperatorShare[];
}

export interface RuleRow {
  rule?: string;
  description?: string;
  recommendation?: string;
  triggered?: number;
  violations?: number;
  datapoints?: number;
  reporting?: boolean;
  parameters?: Record<string, Json>;
  last_trigger_ns?: number;
  details?: Json;
}

export interface TopActivity {
  kind?: string;
  name?: string;
  share?: number;
  total_ns?: number;
}

export interface Evidence {
  node?: string;
  rank?: number;
  pid?: number;
  start_ns?: number;
  end_ns?: number;
  steps?: number[];
  step_phase?: string;
  what?: string;
  top_activity?: TopActivity[];
}

export interface Finding {
  id?: string;
  rule?: string;
  severity?: string;
  title?: string;
  recommendation?: string;
  next_step?: string;
  estimated_saving?: number | null;
  evidence?: Evidence[];
}

// The first screen (src/report/report_sections_verdict.h).
export interface VerdictFigure {
  key?: string;
  label?: string;
  value?: number | null;
  unit?: string;  // "ms", "%", "steps/s", "samples/s", "events", "USD", "USD/h"
}

export interface FindingGroup {
  rule?: string;
  severity?: string;
  title?: string;
  nodes?: string[];
  ranks?: number[];
  findings?: number;
  finding_ids?: string[];
  estimated_saving?: number | null;
  saving_basis?: string;
  recommendation?: string;
  next_step?: string;
  evidence?: Evidence[];
}

export interface Verdict {
  sentence?: string;
  severity?: string;  // "critical", "warning", "info", "ok"
  top_group?: number | null;
  expected_saving?: number | null;
  figures?: VerdictFigure[];
  groups?: FindingGroup[];
}

export interface Histogram {
  bin_edges_ms?: number[];
  counts?: number[];
}

export interface StepStats {
  node?: string;
  phase?: string;
  count?: number;  // steps measured: the statistics below are over them
  disturbed?: number;  // steps stepscope's detail windows ran in, left out of the statistics
  mean_ms?: number;
  std_ms?: number;
  min_ms?: number;
  p50_ms?: number;
  p95_ms?: number;
  p99_ms?: number;
  max_ms?: number;
  outliers?: number[];
  outliers_total?: number;
  // StepOutlier's outliers with their durations, whether or not downsampling kept them in series.
  outlier_points?: { step?: number[]; duration_ms?: number[] };
  series?: { step?: number[]; duration_ms?: number[]; downsampled?: boolean; original_points?: number };
}

// All step durations on shared bin edges: a series per node and phase (per rank on nodes that
// ran several ranks).
export interface StepHistogram {
  bin_edges_ms?: number[];
  series?: { label?: string; node?: string; phase?: string; rank?: number | null; counts?: number[] }[];
}

// One rank's step times on a node that ran several ranks (torchrun --nproc-per-node > 1).
export interface RankStepStats {
  node?: string;
  rank?: number;
  local_rank?: number;
  world_size?: number;
  pid?: number;
  pids?: number[];
  phase?: string;
  count?: number;
  mean_ms?: number;
  p50_ms?: number;
  p95_ms?: number;
  max_ms?: number;
  backward_p50_ms?: number;
  outside_backward_p50_ms?: number;
  data_wait_share?: number;
}

export interface Steps extends Availability {
  nodes?: StepStats[];
  histogram?: StepHistogram;
  ranks?: RankStepStats[];
  ranks_total?: number;
}

export interface GpuStats {
  node?: string;
  gpu?: number;
  min?: number;
  p5?: number;
  p25?: number;
  p50?: number;
  p75?: number;
  p95?: number;
  max?: number;
  series?: Series;
  // gpu_utilization rows only, where NVML recorded more of the GPU (report_sections_gpu_health.h).
  health?: GpuHealth;
}

export interface MeanMax {
  mean?: number;
  max?: number;
}

export interface GpuHealth {
  pcie_tx_bytes_per_s?: MeanMax;
  pcie_rx_bytes_per_s?: MeanMax;
  // Shares of the GPU's samples (0..1) in which each clock throttle reason was active;
  // throttled_share counts any reason but idle.
  throttle?: { samples?: number; throttled_share?: number; reasons?: Record<string, number> };
  ecc_corrected_errors?: number;
  ecc_uncorrected_errors?: number;
  xid?: { t_s?: number; code?: number }[];
  xid_count?: number;
  sm_activity_pct?: MeanMax;
  tensor_activity_pct?: MeanMax;
  processes?: { pid?: number; sm_util_pct?: MeanMax; memory_used_bytes?: MeanMax }[];
}

export interface GpuSection extends Availability {
  gpus?: GpuStats[];
}

export interface DetailsSection extends Availability {
  // CPU and I/O bottlenecks: what the per-snapshot entries add up to (report_sections_rules.cc),
  // and what the framework did at them (shares of 1, largest first: report_rule_charts.h).
  summary?: {
    snapshots?: number; datapoints?: number; sentence?: string; band?: { bin_edges_s?: number[]; counts?: number[] };
    causes?: { name?: string; share?: number }[];
    step_phases?: { phase?: string; share?: number }[];
  };
  details?: Json;
  // Workload balancing: each GPU's utilization histogram on LoadBalancing's bins.
  histograms?: {
    bin_edges_pct?: number[];
    gpus?: { node?: string; gpu?: string; counts?: number[] }[];
    distances?: { node?: string; a?: string; b?: string; distance?: number }[];
  } | null;
  // Batch size: BatchSize's box statistics (%) when it last triggered.
  boxes?: { node?: string; series?: string; label?: string; lower?: number; p25?: number; p50?: number; p75?: number; p95?: number; upper?: number }[];
  triggered_at_s?: number | null;
}

export interface DataLoading extends Availability {
  dataloader?: Json;
  starvation?: Json;
}

export interface PythonProfile extends Availability {
  functions?: { function?: string; file?: string; line?: number; calls?: number; self_s?: number; cumulative_s?: number }[];
  windows?: { node?: string; pid?: number; steps?: number[] }[];
}

export interface OperatorsSection extends Availability {
  windows?: {
    node?: string;
    pid?: number;
    steps?: number[];
    operators?: { name?: string; calls?: number; cpu_total_us?: number; self_cpu_us?: number; device_total_us?: number }[];
  }[];
}

export interface Overhead extends Availability {
  dropped_events?: number;
  bytes_on_disk?: Record<string, number>;
  spans?: { name?: string; count?: number; total_ms?: number }[];
  sampler_cpu_pct?: number | null;
}

export interface Capabilities extends Availability {
  nodes?: { node?: string; capabilities?: Json }[];
}

export interface ReportDocument {
  schema?: string;
  version?: number;
  kind?: "report";
  generated_by?: string;
  generated_at_ns?: number;
  limits?: { max_points_per_series?: number };
  run?: RunFacts;
  job_summary?: JobSummary;
  system_usage?: SystemUsage;
  framework?: Framework;
  rules?: RuleRow[];
  findings?: Finding[];
  steps?: Steps;
  gpu_utilization?: GpuSection;
  gpu_memory?: GpuSection;
  gpu_activity?: GpuActivitySection;
  gpu_idle?: GpuIdleSection;
  annotations?: AnnotationsSection;
  workload_balancing?: DetailsSection;
  data_loading?: DataLoading;
  batch_size?: DetailsSection;
  cpu_bottlenecks?: DetailsSection;
  io_bottlenecks?: DetailsSection;
  step_time_breakdown?: DetailsSection;
  python_profile?: PythonProfile;
  operators?: OperatorsSection;
  overhead?: Overhead;
  capabilities?: Capabilities;
  verdict?: Verdict;
}

export interface CompareRun {
  label?: string;
  job?: string;
  path?: string;
  duration_s?: number;
  instance_type?: string | null;
  instance_count?: number | null;
  price_per_hour?: number | null;
  cost?: number | null;
}

export interface ComparePhaseSide {
  count?: number;
  mean_ms?: number;
  p50_ms?: number;
  p95_ms?: number;
  histogram?: Histogram;
}

export interface CompareDocument {
  schema?: string;
  version?: number;
  kind: "compare";
  generated_by?: string;
  verdict?: { sentence?: string };
  findings?: Availability & {
    only_a?: { rule?: string; titles?: string[] }[];
    only_b?: { rule?: string; titles?: string[] }[];
    both?: { rule?: string; a?: string[]; b?: string[] }[];
  };
  runs?: CompareRun[];
  cost?: Availability & { saving?: number; saving_share?: number; cheaper?: string };
  steps?: Availability & {
    phases?: {
      phase?: string;
      a?: ComparePhaseSide;
      b?: ComparePhaseSide;
      delta_p50_share?: number;
      test?: { name?: string; u?: number; p_value?: number; significant?: boolean };
    }[];
  };
  phases?: Availability & { rows?: { name?: string; a_ms?: number; b_ms?: number; delta_share?: number }[] };
  operators?: Availability & { rows?: { name?: string; a_ms?: number; b_ms?: number; delta_share?: number }[] };
  utilization?: Availability & { rows?: { metric?: string; a_p95?: number; b_p95?: number }[] };
}

// gpu_activity (docs/report-model.md): what each GPU spent its active span on.
export interface GpuWorkShare {
  work: "kernel" | "memcpy" | "memset" | "sync" | "idle";
  ms: number;
  share: number;
  summed_ms: number | null;
  count: number | null;
}

export interface MemoryOperation {
  kind: string;
  host_memory: string;
  count: number;
  total_ms: number;
  bytes: number | null;
  with_bytes: number;
}

export interface PrecisionShare {
  precision: string;
  total_ms: number;
  launches: number;
  from_operator: number;
  examples: { kernel: string; pattern: string; from_operator: boolean; total_ms: number; launches: number }[];
}

export interface GpuActivity {
  node: string;
  gpu: number;
  span_ms: number;
  busy_ms: number;
  busy_share: number;
  idle_ms: number;
  idle_share: number;
  split: GpuWorkShare[];
  memory_operations: MemoryOperation[];
  precisions: PrecisionShare[];
}

export interface GpuActivitySection extends Availability {
  gpus?: GpuActivity[];
}

// annotations: each user annotation's durations (at most max_names names, `bins` bins each).
export interface AnnotationDurations {
  name: string;
  where: "host" | "gpu";
  count: number;
  total_ms: number;
  min_ms: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  histogram: { edges_ms: number[]; counts: number[] };
}

export interface AnnotationsSection extends Availability {
  names_total?: number;
  max_names?: number;
  bins?: number;
  annotations?: AnnotationDurations[];
}

// gpu_idle (docs/report-model.md): each step's time on each GPU of its rank, busy parts and the
// causes of idle time, adding up to the step's duration.
export interface GpuIdleParts {
  compute_ms: number;
  communication_ms: number;
  memcpy_ms: number;
  memset_ms: number;
  data_wait_ms: number;
  sync_ms: number;
  other_ms: number;
  host_bound_ms: number;
  busy_ms: number;
  idle_ms: number;
  kernels: number;
  graph_kernels: number;
}

export interface GpuIdleStep extends GpuIdleParts {
  step: number;
  start_s: number;
  duration_ms: number;
  disturbed: boolean;
}

export interface GpuIdleGpu {
  node: string;
  gpu: number;
  rank: number | null;
  pid: number;
  phase: string;
  steps_total: number;
  total: GpuIdleParts & { step_ms: number };
  steps: GpuIdleStep[];
}

export interface GpuIdleSection extends Availability {
  parts?: string[];
  gpus?: GpuIdleGpu[];
}
