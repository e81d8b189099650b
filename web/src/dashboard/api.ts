// The dashboard's client of `stepscope serve`'s JSON API (docs/dashboard.md): one typed function
// per endpoint, all relative to the page's origin so the token cookie the server set when the
// page was opened as /?token=T goes with every request. Every field is optional: a run under the
// root may be corrupt, partial or foreign, and the page must show that, never throw on it.

import type { CompareDocument, ReportDocument } from "../model";

export type RunStatus = "running" | "completed" | "failed" | "killed" | "unknown";

export interface RunProblem {
  name?: string;
  severity?: string;
  sentence?: string;
}

export interface RunListing {
  id: string;
  job?: string;
  path?: string;
  status?: RunStatus;
  start_ns?: number;
  end_ns?: number;
  duration_s?: number;
  nodes?: string[];
  source?: string;
  instance_type?: string | null;
  loaded?: boolean;
  problems?: RunProblem[];
}

export interface RunList {
  root?: string;
  runs?: RunListing[];
  listed_ms?: number;
}

export interface RunFilter {
  q?: string;
  status?: string;
  from_ns?: number;
  to_ns?: number;
}

export interface LiveState {
  following?: boolean;
  complete_until_ns?: number;
  refreshed_at_ns?: number;
}

export type LiveReport = ReportDocument & { live?: LiveState };

// One bucket series of a system metric on one node: min/max/mean per bucket.
export interface SeriesBuckets {
  node?: string;
  key?: string;
  label?: string;
  t_ns?: number[];
  min?: (number | null)[];  // NaN travels as null in JSON
  max?: (number | null)[];
  mean?: (number | null)[];
}

export interface SeriesAnswer {
  from_ns?: number;
  to_ns?: number;
  bucket_ns?: number;
  keys?: string[];
  series?: SeriesBuckets[];
}

// One step of one node/rank, its time split by phase or annotation.
export interface StepSplit {
  node?: string;
  rank?: number | null;
  pid?: number;
  disturbed?: boolean;
  step?: number;
  phase?: string;
  start_ns?: number;
  end_ns?: number;
  duration_ms?: number;
  parts?: { name?: string; ms?: number }[];
}

export interface StepsAnswer {
  steps?: StepSplit[];
}

// One slice of a timeline answer: [track id, depth, start_ns - from_ns, duration_ns, name index,
// count] (count > 1: that many spans merged into one pixel column; src/server/timeline_answer.h).
export type TimelineSlice = [number, number, number, number, number, number];

export interface TimelineTrack {
  id: number;
  process?: string;
  thread?: string;
  device?: number;
  lane?: number;
}

export interface TimelineAnswer {
  from_ns?: number;
  to_ns?: number;
  width_px?: number;
  ns_per_column?: number;
  widenings?: number;
  events?: number;
  step?: { number?: number; start_ns?: number; end_ns?: number };
  tracks?: TimelineTrack[];
  names?: string[];
  slices?: TimelineSlice[];
  flows?: [number, number][];
}

export interface TimelineQuery {
  from_ns?: number;
  to_ns?: number;
  step?: number;
  width_px: number;
}

export interface CtlRequest {
  node?: string;
  interval?: string;
  detailed_steps?: string;
  python_steps?: string;
  dataloader_steps?: string;
  gpu_steps?: string;
}

// What the server said, whatever the status: the Control page shows a refusal's reason as is.
export interface ServerAnswer {
  ok: boolean;
  status: number;
  body: unknown;
  text: string;
}

// The server names what went wrong in {"error": "..."}; anything else is shown as its status.
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function send(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<ServerAnswer> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (signal) init.signal = signal;
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { Accept: "application/json", "Content-Type": "application/json" };
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { ok: response.ok, status: response.status, body: parsed, text };
}

async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const answer = await send("GET", path, undefined, signal);
  if (!answer.ok) throw new ApiError(answer.status, errorText(answer));
  return answer.body as T;
}

export function errorText(answer: ServerAnswer): string {
  const error = (answer.body as { error?: unknown } | null)?.error;
  if (typeof error === "string" && error) return error;
  return answer.text.trim() || `the server answered ${answer.status}`;
}

const runPath = (id: string): string => `/api/runs/${encodeURIComponent(id)}`;

export function listRuns(filter: RunFilter): Promise<RunList> {
  return getJson<RunList>(`/api/runs${query({ q: filter.q, status: filter.status, from_ns: filter.from_ns, to_ns: filter.to_ns })}`);
}

export async function setLoaded(id: string, loaded: boolean): Promise<boolean> {
  const answer = await send("POST", `${runPath(id)}/${loaded ? "load" : "unload"}`);
  if (!answer.ok) throw new ApiError(answer.status, errorText(answer));
  return (answer.body as { loaded?: unknown } | null)?.loaded === true;
}

export function fetchReport(id: string): Promise<LiveReport> {
  return getJson<LiveReport>(`${runPath(id)}/report`);
}

export function fetchSeries(id: string, keys: string[], range: { from_ns?: number; to_ns?: number }, points: number): Promise<SeriesAnswer> {
  return getJson<SeriesAnswer>(`${runPath(id)}/series${query({ keys: keys.join(","), from_ns: range.from_ns, to_ns: range.to_ns, points })}`);
}

export function fetchSteps(id: string, last: number): Promise<StepsAnswer> {
  return getJson<StepsAnswer>(`${runPath(id)}/steps${query({ last })}`);
}

// `stepscope compare A B`'s document for two runs of the listing.
export function fetchCompare(a: string, b: string): Promise<CompareDocument> {
  return getJson<CompareDocument>(`/api/compare${query({ a, b })}`);
}

// A newer viewport aborts the request for the older one through `signal`.
export function fetchTimeline(id: string, request: TimelineQuery, signal?: AbortSignal): Promise<TimelineAnswer> {
  return getJson<TimelineAnswer>(`${runPath(id)}/timeline${query({ from_ns: request.from_ns, to_ns: request.to_ns, step: request.step, width_px: request.width_px })}`, signal);
}

export function sendCtl(id: string, request: CtlRequest): Promise<ServerAnswer> {
  return send("POST", `${runPath(id)}/ctl`, request);
}

// A page's status line after a request failed: what was asked for and the server's reason.
export function showFailure(status: HTMLElement, what: string, error: unknown): void {
  status.hidden = false;
  status.textContent = `The server did not give ${what}: ${error instanceof Error ? error.message : String(error)}`;
}
