// The server's push channel (GET /api/events, Server-Sent Events): "run" when a loaded live run
// grew, "runs" when the listing changed. One EventSource for the page; pages subscribe while they
// are shown and unsubscribe when the route changes. EventSource reconnects by itself after the
// server restarts or the network drops.

export interface RunGrew {
  id?: string;
  new_events?: number;
  new_samples?: number;
  complete_until_ns?: number;
}

type Listener = { kind: "run"; call: (event: RunGrew) => void } | { kind: "runs"; call: () => void };

const listeners = new Set<Listener>();
let source: EventSource | null = null;

function connect(): void {
  if (source || typeof EventSource === "undefined") return;
  source = new EventSource("/api/events", { withCredentials: true });
  source.addEventListener("run", (message) => {
    let event: RunGrew;
    try {
      event = JSON.parse((message as MessageEvent<string>).data) as RunGrew;
    } catch {
      return;  // a malformed message is skipped; the next one brings the run up to date
    }
    for (const l of listeners) if (l.kind === "run") l.call(event);
  });
  source.addEventListener("runs", () => {
    for (const l of listeners) if (l.kind === "runs") l.call();
  });
}

// Calls `call` when run `id` grew; returns the unsubscribe function.
export function onRunGrew(id: string, call: (event: RunGrew) => void): () => void {
  const listener: Listener = { kind: "run", call: (event) => { if (event.id === id) call(event); } };
  listeners.add(listener);
  connect();
  return () => listeners.delete(listener);
}

export function onRunsChanged(call: () => void): () => void {
  const listener: Listener = { kind: "runs", call };
  listeners.add(listener);
  connect();
  return () => listeners.delete(listener);
}

// At most one call of `work` per `intervalMs`, the last request always honoured: a burst of
// events becomes one re-fetch now and one at the end of the interval, never a queue. `work` is
// not started again while the previous one is still running.
export function throttled(work: () => Promise<void>, intervalMs: number): () => void {
  let lastStart = 0;
  let timer: number | null = null;
  let running = false;
  let pending = false;
  const start = (): void => {
    timer = null;
    if (running) {
      pending = true;
      return;
    }
    running = true;
    pending = false;
    lastStart = Date.now();
    work().finally(() => {
      running = false;
      if (pending) request();
    });
  };
  const request = (): void => {
    if (timer !== null) return;
    const wait = Math.max(0, lastStart + intervalMs - Date.now());
    timer = window.setTimeout(start, wait);
  };
  return request;
}

// Runs `load` now and again whenever run `id` grows, at most once a second; `refresh` asks for
// one more (a zoom), `stop` ends it when the page goes.
export function followRun(id: string, load: () => Promise<void>): { refresh: () => void; stop: () => void } {
  const refresh = throttled(load, 1000);
  const unsubscribe = onRunGrew(id, refresh);
  refresh();
  return { refresh, stop: unsubscribe };
}
