// Measures in headless Chromium how long after navigation a page shows what it is for
// (benchmarks/dashboard_benchmark.py drives it; playwright-core from web/node_modules):
//   overview   the verdict sentence is laid out (first meaningful paint of the Overview)
//   nodes      every chart of the Nodes page has drawn pixels
//   report     the static report.html of the same run shows its verdict sentence (the baseline)
//   timeline   frames per second while the Timeline page is zoomed and panned by script
// Prints one JSON object: {"<what>": [ms or fps per repetition]}.
//
//   node dashboard_paint.mjs --web-dir DIR --url BASE --run ID --report FILE [--repetitions 3]
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const argument = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const webDir = argument("--web-dir"), base = argument("--url"), run = argument("--run"), report = argument("--report");
const repetitions = Number(argument("--repetitions") ?? "3");
const pages = (argument("--pages") ?? "report,overview,nodes,timeline").split(",");
const { chromium } = createRequire(join(resolve(webDir), "package.json"))("playwright-core");
const flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--disable-sync", "--no-first-run", "--disable-quic"];
const kLimitMs = 120_000;

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "stepscope-bench-")), {
  executablePath: "/usr/bin/chromium", headless: true, args: flags, viewport: { width: 1280, height: 800 } });
const page = context.pages()[0] ?? (await context.newPage());
const results = {};
const since = () => page.evaluate(() => performance.now());

async function measure(name, url, ready) {
  results[name] = [];
  for (let i = 0; i < repetitions; i++) {
    await page.goto("about:blank");
    await page.goto(url, { waitUntil: "commit" });
    await page.waitForFunction(ready, null, { timeout: kLimitMs, polling: "raf" });
    results[name].push(await since());  // performance.now() counts from this navigation's start
  }
}

const verdictShown = () => {
  const sentence = document.querySelector(".verdict-sentence");
  return sentence !== null && sentence.getBoundingClientRect().height > 0;
};
const chartsDrawn = () => {
  const canvases = [...document.querySelectorAll("main canvas, .run-page-body canvas")];
  return canvases.length > 0 && canvases.every((canvas) => {
    if (canvas.clientWidth === 0 || canvas.width === 0 || canvas.height === 0) return false;
    const data = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
    for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
    return false;
  });
};

try {
  if (pages.includes("report")) await measure("report", pathToFileURL(resolve(report)).href, verdictShown);
  if (pages.includes("overview")) await measure("overview", `${base}/#/run/${encodeURIComponent(run)}/overview`, verdictShown);
  if (pages.includes("nodes")) await measure("nodes", `${base}/#/run/${encodeURIComponent(run)}/nodes`, chartsDrawn);
  if (pages.includes("timeline")) {
    results.timeline_fps = [];
    for (let i = 0; i < repetitions; i++) {
      await page.goto(`${base}/#/run/${encodeURIComponent(run)}/timeline`, { waitUntil: "commit" });
      await page.waitForFunction(() => Number(document.querySelector("canvas.timeline-canvas")?.getAttribute("data-slices") ?? 0) > 0,
        null, { timeout: kLimitMs });
      const box = await page.locator("canvas.timeline-canvas").boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + 40);
      // Count frames while zooming in and out and dragging for two seconds.
      await page.evaluate(() => { window.__frames = 0; const tick = () => { window.__frames++; window.__raf = requestAnimationFrame(tick); }; tick(); });
      const started = Date.now();
      let step = 0;
      while (Date.now() - started < 2000) {
        await page.mouse.wheel(0, step % 20 < 10 ? -120 : 120);
        if (step % 5 === 0) {
          await page.mouse.down();
          await page.mouse.move(box.x + box.width / 2 + (step % 10 < 5 ? 30 : -30), box.y + 40);
          await page.mouse.up();
        }
        step++;
      }
      const frames = await page.evaluate(() => { cancelAnimationFrame(window.__raf); return window.__frames; });
      results.timeline_fps.push((frames * 1000) / (Date.now() - started));
    }
  }
} finally {
  await context.close();
}
console.log(JSON.stringify(results));
