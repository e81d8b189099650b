// The Control page: what `stepscope ctl` does, from the browser (POST /api/runs/{id}/ctl): change
// the sampling interval of a running job, or schedule a detail window (operators, Python,
// data loader, GPU) as START:COUNT steps. The server validates and answers; the page shows its
// answer as it came, a refusal (409: the job is not running) with its reason, so the reader
// learns what the command would have said.

import { asArray, el, para, section } from "../dom";
import { type CtlRequest, type ServerAnswer, errorText, fetchReport, sendCtl } from "./api";
import type { PageCleanup, RunFrame } from "./run_page";

const kWindows: [keyof CtlRequest, string, string][] = [
  ["detailed_steps", "Operator profiling window", "the PyTorch profiler, with kernels on a GPU"],
  ["python_steps", "Python profiling window", "cProfile or the sampling profiler"],
  ["dataloader_steps", "Data-loader window", "per-sample timings in every worker"],
  ["gpu_steps", "GPU window", "every kind of GPU activity, where stepscope traces the GPU"],
];

function answerText(answer: ServerAnswer): string {
  if (!answer.ok) return `Refused (${answer.status}): ${errorText(answer)}`;
  return `Accepted (${answer.status}):\n${answer.body !== null ? JSON.stringify(answer.body, null, 2) : answer.text}`;
}

export function renderControl(body: HTMLElement, run: string, frame: RunFrame): PageCleanup {
  const shell = section("control", "Control the running job",
    "Change the sampling interval (applied within about a second) or schedule a detail window (applied at the job's next step), as `stepscope ctl` does. The change is written into the run as a control file the job reads; the job records whether it applied it.",
    { available: true });
  const node = el("select", { attrs: { name: "node", "aria-label": "Node" } }, el("option", { text: "every node", attrs: { value: "" } }));
  const interval = el("input", { attrs: { name: "interval", placeholder: "e.g. 100ms, 1s (10ms to 60s)", "aria-label": "Sampling interval" } });
  const form = el("form", { cls: "control-form" }, el("label", { text: "Node", attrs: { for: "ctl-node" } }), node,
    el("label", { text: "Sampling interval" }), interval);
  node.id = "ctl-node";
  const windows = kWindows.map(([key, title, what]) => {
    const input = el("input", { attrs: { name: key, placeholder: "START:COUNT, e.g. 200:3", "aria-label": title } });
    form.append(el("label", { text: `${title} (${what})` }), input);
    return [key, input] as const;
  });
  const send = el("button", { text: "Send to the job", attrs: { type: "submit" } });
  form.append(el("span"), send);
  const answer = el("pre", { cls: "server-answer", attrs: { "aria-live": "polite" } });
  answer.hidden = true;
  shell.body.append(form, answer);
  body.append(shell.root);

  let alive = true;
  fetchReport(run).then((report) => {
    if (!alive) return;
    frame.showReport(report);
    for (const name of asArray(report.run?.nodes)) node.append(el("option", { text: name, attrs: { value: name } }));
    if (report.live && !report.live.following) {
      shell.body.prepend(para("This run is not being followed as a live job: the server will refuse changes unless the job is still running.", "note"));
    }
  }).catch(() => {
    // The form still works without the node list; the server names a wrong run in its answer.
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const request: CtlRequest = {};
    if (node.value) request.node = node.value;
    if (interval.value.trim()) request.interval = interval.value.trim();
    for (const [key, input] of windows) if (input.value.trim()) request[key] = input.value.trim();
    if (Object.keys(request).filter((k) => k !== "node").length === 0) {
      answer.hidden = false;
      answer.className = "server-answer refused";
      answer.textContent = "Nothing to send: give an interval or a window.";
      return;
    }
    send.disabled = true;
    sendCtl(run, request).then((reply) => {
      answer.className = `server-answer ${reply.ok ? "accepted" : "refused"}`;
      answer.textContent = answerText(reply);
    }).catch((error: unknown) => {
      answer.className = "server-answer refused";
      answer.textContent = `The request did not reach the server: ${error instanceof Error ? error.message : String(error)}`;
    }).finally(() => {
      answer.hidden = false;
      send.disabled = false;
    });
  });
  return () => { alive = false; };
}
