// Drives the live dashboard of a running `stepscope serve` in headless Chromium (playwright-core,
// the system's /usr/bin/chromium) through one scenario and prints what a person would have seen
// as JSON on stdout. Requests may go only to the server under test: any other is blocked and
// reported. Every wait is for something on the page, with a limit that only keeps a broken page
// from hanging the test (the Python side then says what was missing).
//
//   node drive_dashboard.mjs --web-dir <repo>/web --base http://127.0.0.1:PORT --out DIR SCENARIO ARGS...
//
//   pages RUN NAME         open Overview, Nodes, GPU and Control of RUN; screenshots DIR/NAME-<page>.png
//                          (whole page) and DIR/NAME-<page>-first-screen.png (1280x800)
//   jobs QUERY RUN NAME    the job list: search QUERY, load RUN, unload it; DIR/NAME-all.png
//                          (every run), DIR/NAME.png (the search, RUN loaded)
//   zoom RUN NAME          select an interval on the Nodes page of RUN by dragging
//   live RUN               the Nodes page of a running RUN until its charts gain points
//   control RUN WINDOW NAME  schedule an operator detail window START:COUNT from the Control page;
//                          DIR/NAME.png shows the server's answer
//   compare RUN,RUN NAME   the side-by-side view of several runs
//
// Exits 77 (skipped) when Chromium is not installed.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const kChromium = process.env.STEPSCOPE_CHROMIUM || "/usr/bin/chromium";
// A quiet, hermetic browser (as tests/report_browser/check_page.mjs): no sandbox (containers and
// root), no GPU, nothing that phones home.
const kChromiumFlags = [
  "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--disable-sync", "--no-first-run", "--disable-quic",
];
const kLimitMs = 120_000;

function option(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const webDir = option("--web-dir");
const base = option("--base");
const outDir = option("--out");
const positional = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith("--") && !all[i - 1]?.startsWith("--"));
const [scenario, ...args] = positional;
if (!webDir || !base || !outDir || !scenario) {
  console.error("usage: node drive_dashboard.mjs --web-dir DIR --base URL --out DIR SCENARIO ARGS...");
  process.exit(2);
}
// playwright-core is web/'s devDependency, installed by the build's `npm ci`; the browser is the
// system's, so a missing one is a skip, not a failure.
function launchChromium(profileDir) {
  if (!existsSync(kChromium)) {
    console.error(`drive_dashboard: ${kChromium} is not installed (scripts/setup.sh installs chromium); skipping`);
    process.exit(77);
  }
  const { chromium } = createRequire(join(resolve(webDir), "package.json"))("playwright-core");
  return chromium.launchPersistentContext(profileDir, {
    executablePath: kChromium, headless: true, args: kChromiumFlags, viewport: { width: 1280, height: 800 },
  });
}

const result = { console_errors: [], page_errors: [], blocked_requests: [] };

// Waits until every laid-out canvas has a drawing buffer of its box's size with pixels drawn in
// it (Chart.js resizes a chart in a later frame), then until the page's status lines are gone.
async function settle(page) {
  await page.waitForFunction(() => [...document.querySelectorAll(".run-page-body > p.note, .report-sections ~ p.note")]
    .every((p) => p.hidden), null, { timeout: kLimitMs }).catch(() => {});
  // A live page paints its first sections, then builds the rest a frame later (live_report.ts).
  await page.waitForFunction(() => document.querySelector(".report-sections[data-painting]") === null, null,
    { timeout: kLimitMs }).catch(() => {});
  await page.waitForFunction(() => [...document.querySelectorAll("canvas")].every((canvas) => {
    if (canvas.clientWidth === 0 || canvas.clientHeight === 0) return true;
    const scale = window.devicePixelRatio || 1;
    if (canvas.width !== Math.floor(canvas.clientWidth * scale) || canvas.height !== Math.floor(canvas.clientHeight * scale)) return false;
    const pixels = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) return true;
    return false;
  }), null, { polling: "raf", timeout: kLimitMs }).catch(() => {});
}

// What the page shows: sections, charts (axes and series as charts.ts states them), status lines.
function observe(page) {
  return page.evaluate(() => ({
    hash: location.hash,
    h1: document.querySelector("h1")?.textContent ?? "",
    run_name: document.querySelector(".run-name")?.textContent ?? null,
    live: document.querySelector(".live-state")?.textContent ?? null,
    notes: [...document.querySelectorAll("p.note:not([hidden]), p.why")].map((p) => p.textContent),
    sections: [...document.querySelectorAll("section[data-section]")].map((s) => ({
      key: s.getAttribute("data-section"),
      title: s.querySelector("h2")?.textContent ?? "",
      available: !s.classList.contains("unavailable"),
      why: s.querySelector(".section-body > p.why")?.textContent ?? null,
      canvases: s.querySelectorAll("canvas").length,
    })),
    canvases: [...document.querySelectorAll("canvas")].map((canvas) => ({
      label: canvas.getAttribute("aria-label"),
      axes: JSON.parse(canvas.getAttribute("data-axes") ?? "{}"),
      series: JSON.parse(canvas.getAttribute("data-series") ?? "[]"),
    })),
    images: document.querySelectorAll("img").length,
    body_text: document.body.innerText,
    xss: window.__stepscope_xss === 1,
  }));
}

const scenarios = {
  async pages(page, [run, name]) {
    result.pages = {};
    for (const tab of ["overview", "nodes", "gpu", "timeline", "control"]) {
      await page.goto(`${base}/#/run/${encodeURIComponent(run)}/${tab}`, { waitUntil: "load" });
      await page.waitForSelector(`main[data-page="${tab}"]`, { timeout: kLimitMs });
      await settle(page);
      result.pages[tab] = await observe(page);
      await page.screenshot({ path: join(outDir, `${name}-${tab}.png`), fullPage: true });
      // What a reader sees first (the user guide's pictures).
      await page.screenshot({ path: join(outDir, `${name}-${tab}-first-screen.png`) });
    }
  },

  // The Timeline page: the whole run, then one wheel zoom at the canvas's centre (a finer answer
  // comes), then "Zoom to step" with the given step number ("" to skip it).
  async timeline(page, [run, step, name]) {
    const canvasState = () => page.evaluate(() => {
      const canvas = document.querySelector("canvas.timeline-canvas");
      return {
        slices: Number(canvas?.getAttribute("data-slices") ?? 0),
        flows: Number(canvas?.getAttribute("data-flows") ?? 0),
        info: document.querySelector(".timeline-info")?.textContent ?? "",
        status: document.querySelector(".run-page-body p.status:not([hidden])")?.textContent ?? null,
      };
    });
    await page.goto(`${base}/#/run/${encodeURIComponent(run)}/timeline`, { waitUntil: "load" });
    await page.waitForFunction(() => Number(document.querySelector("canvas.timeline-canvas")?.getAttribute("data-slices") ?? 0) > 0,
      null, { timeout: kLimitMs }).catch(() => {});
    result.whole = await canvasState();
    await page.screenshot({ path: join(outDir, `${name}.png`) });
    const box = await page.locator("canvas.timeline-canvas").boundingBox();
    await page.mouse.move(box.x + box.width * 0.6, box.y + 20);
    await page.mouse.wheel(0, -600);
    await page.waitForFunction((before) => (document.querySelector(".timeline-info")?.textContent ?? "") !== before,
      result.whole.info, { timeout: kLimitMs }).catch(() => {});
    result.zoomed = await canvasState();
    result.page = await observe(page);
    if (step === "") return;
    await page.fill(".timeline-controls input", String(step));
    await page.click("text=Zoom to step");
    // The step's answer, or the server's refusal on the status line.
    await page.waitForFunction(() => (document.querySelector(".timeline-info")?.textContent ?? "").includes("· step")
      || document.querySelector(".run-page-body p.status:not([hidden])") !== null, null, { timeout: kLimitMs }).catch(() => {});
    result.step = await canvasState();
    result.page = await observe(page);
    await page.screenshot({ path: join(outDir, `${name}-step.png`) });
  },

  // Drags across the middle half of the first chart of the Nodes page, as a reader selects an
  // interval: every synced chart zooms to it and the steps in it are listed.
  async zoom(page, [run, name]) {
    await page.goto(`${base}/#/run/${encodeURIComponent(run)}/nodes`, { waitUntil: "load" });
    await page.waitForSelector(".synced-charts canvas", { timeout: kLimitMs });
    await settle(page);
    const canvas = page.locator(".synced-charts canvas").first();
    const box = await canvas.boundingBox();
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.3, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.7, y, { steps: 5 });
    await page.mouse.up();
    await page.waitForSelector(".selection h3", { timeout: kLimitMs }).catch(() => {});
    await settle(page);
    result.selection = await page.evaluate(() => ({
      heading: document.querySelector(".selection h3")?.textContent ?? null,
      rows: [...document.querySelectorAll(".selection tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
    }));
    result.page = await observe(page);
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
  },

  // The GPU page's annotation picker: the histogram drawn for the first annotation, then for the
  // second one picked from the <select>.
  async annotations(page, [run, name]) {
    await page.goto(`${base}/#/run/${encodeURIComponent(run)}/gpu`, { waitUntil: "load" });
    await page.waitForSelector("select.annotation-picker", { timeout: kLimitMs });
    await settle(page);
    const histogram = () => page.evaluate(() => {
      const canvas = document.querySelector(".annotation-histogram canvas");
      return {
        label: canvas?.getAttribute("aria-label") ?? null,
        axes: JSON.parse(canvas?.getAttribute("data-axes") ?? "{}"),
        stats: document.querySelector(".annotation-stats")?.textContent ?? "",
      };
    });
    result.options = await page.$$eval("select.annotation-picker option", (options) => options.map((o) => o.textContent));
    result.first = await histogram();
    await page.selectOption("select.annotation-picker", "1");
    await page.waitForFunction((before) => document.querySelector(".annotation-histogram canvas")?.getAttribute("aria-label") !== before,
      result.first.label, { timeout: kLimitMs }).catch(() => {});
    await settle(page);
    result.picked = await histogram();
    result.page = await observe(page);
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
  },

  async jobs(page, [query, run, name]) {
    await page.goto(`${base}/`, { waitUntil: "load" });
    const row = (id) => page.locator(`tr[data-run="${id}"]`);
    await page.waitForSelector("table.runs tbody tr", { timeout: kLimitMs });
    result.all = await page.$$eval("table.runs tbody tr[data-run]", (rows) => rows.map((r) => r.getAttribute("data-run")));
    await page.screenshot({ path: join(outDir, `${name}-all.png`) });
    await page.fill("input[name=q]", query);
    await page.click("form.filters button[type=submit]");
    await page.waitForFunction((count) => document.querySelectorAll("table.runs tbody tr[data-run]").length !== count
      || document.querySelector(".list-summary")?.textContent?.startsWith("1 run"), result.all.length, { timeout: kLimitMs }).catch(() => {});
    result.found = await page.$$eval("table.runs tbody tr[data-run]", (rows) => rows.map((r) => r.getAttribute("data-run")));
    result.found_jobs = await page.$$eval("table.runs tbody tr[data-run] td:nth-child(2) a", (links) => links.map((a) => a.textContent));
    await row(run).locator("button.load").click();
    await page.waitForFunction((id) => document.querySelector(`tr[data-run="${id}"] button.load`)?.textContent === "Unload", run, { timeout: kLimitMs }).catch(() => {});
    result.after_load = await row(run).locator("button.load").textContent();
    result.listed_after_load = await page.evaluate(async () => (await (await fetch("/api/runs")).json()).runs.map((r) => [r.id, r.loaded]));
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
    await row(run).locator("button.load").click();
    await page.waitForFunction((id) => document.querySelector(`tr[data-run="${id}"] button.load`)?.textContent === "Load", run, { timeout: kLimitMs }).catch(() => {});
    result.after_unload = await row(run).locator("button.load").textContent();
    result.listed_after_unload = await page.evaluate(async () => (await (await fetch("/api/runs")).json()).runs.map((r) => [r.id, r.loaded]));
    // The status filter: a listing of running runs only, then of completed ones.
    const listed = async (status) => {
      await page.fill("input[name=q]", "");
      await page.selectOption("select[name=status]", status);
      await page.click("form.filters button[type=submit]");
      await page.waitForFunction(() => !document.querySelector(".list-summary")?.textContent?.startsWith("Listing"), null, { timeout: kLimitMs });
      return page.$$eval("table.runs tbody tr[data-run]", (rows) => rows.map((r) => r.getAttribute("data-run")));
    };
    result.running = await listed("running");
    result.completed = await listed("completed");
    result.page = await observe(page);
  },

  async live(page, [run]) {
    await page.goto(`${base}/#/run/${encodeURIComponent(run)}/nodes`, { waitUntil: "load" });
    await settle(page);
    const points = () => page.evaluate(() => [...document.querySelectorAll("canvas[data-series]")]
      .reduce((sum, c) => sum + JSON.parse(c.getAttribute("data-series")).reduce((s, d) => s + d.points, 0), 0));
    result.points_before = await points();
    // The page redraws on the server's "run" events alone: nothing here reloads it.
    await page.waitForFunction((before) => [...document.querySelectorAll("canvas[data-series]")]
      .reduce((sum, c) => sum + JSON.parse(c.getAttribute("data-series")).reduce((s, d) => s + d.points, 0), 0) > before,
    result.points_before, { timeout: kLimitMs, polling: 200 }).catch(() => {});
    result.points_after = await points();
    result.page = await observe(page);
  },

  async control(page, [run, window, name]) {
    await page.goto(`${base}/#/run/${encodeURIComponent(run)}/control`, { waitUntil: "load" });
    await page.waitForSelector("form.control-form", { timeout: kLimitMs });
    await page.fill("input[name=detailed_steps]", window);
    await page.click("form.control-form button[type=submit]");
    await page.waitForSelector("pre.server-answer:not([hidden])", { timeout: kLimitMs }).catch(() => {});
    result.answer = await page.$eval("pre.server-answer", (pre) => ({ text: pre.textContent, cls: pre.className, hidden: pre.hidden }));
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
  },

  async compare(page, [runs, name]) {
    await page.goto(`${base}/#/compare/${runs.split(",").map(encodeURIComponent).join(",")}`, { waitUntil: "load" });
    await page.waitForFunction(() => [...document.querySelectorAll(".compare-column")].every((c) => c.querySelector("section[data-section], p.why")),
      null, { timeout: kLimitMs }).catch(() => {});
    // Two runs: `stepscope compare`'s document below the columns (or why not).
    if (runs.split(",").length === 2) {
      await page.waitForSelector(".comparison section[data-section], .comparison p.why", { timeout: kLimitMs }).catch(() => {});
    }
    await settle(page);
    result.comparison = await page.$$eval(".comparison section[data-section]", (sections) => sections.map((s) => s.getAttribute("data-section")));
    result.columns = await page.$$eval(".compare-column", (columns) => columns.map((c) => ({
      run: c.getAttribute("data-run"), heading: c.querySelector("h2")?.textContent ?? "",
      sentence: c.querySelector(".verdict-sentence")?.textContent ?? null,
    })));
    result.page = await observe(page);
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
  },
};

if (!scenarios[scenario]) {
  console.error(`drive_dashboard: no scenario "${scenario}" (${Object.keys(scenarios).join(", ")})`);
  process.exit(2);
}
// Only the server under test may be reached; what else the page asks for is blocked and listed,
// and so is every script error.
async function openPage(context) {
  const local = (url) => url === base || url.startsWith(`${base}/`);
  await context.route("**/*", (route) => (local(route.request().url()) ? route.continue() : route.abort().then(() => result.blocked_requests.push(route.request().url()))));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => result.page_errors.push(String(error)));
  page.on("console", (message) => message.type() === "error" && result.console_errors.push(message.text()));
  return page;
}

const userDataDir = mkdtempSync(join(tmpdir(), "stepscope-chromium-"));
const context = await launchChromium(userDataDir);
try {
  await scenarios[scenario](await openPage(context), args);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result));
