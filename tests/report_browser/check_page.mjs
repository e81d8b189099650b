// Opens a stepscope HTML report in headless Chromium (playwright-core, the system's
// /usr/bin/chromium) with every network request blocked, and prints what a person would see
// as JSON on stdout: the section headings, whether each chart canvas has drawn pixels, console
// and page errors, blocked requests. Saves a full-page screenshot.
//
//   node check_page.mjs --web-dir <repo>/web --screenshot OUT.png REPORT.html
//
// Exits 77 (skipped) when Chromium is not installed.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const kChromium = process.env.STEPSCOPE_CHROMIUM || "/usr/bin/chromium";
// Flags for a quiet, hermetic browser: no sandbox (containers and root), no GPU, nothing that
// phones home (background networking, component updates, sync, QUIC).
export const kChromiumFlags = [
  "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--disable-sync", "--no-first-run", "--disable-quic",
];

function argument(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const webDir = argument("--web-dir");
const screenshot = argument("--screenshot");
const report = process.argv[process.argv.length - 1];
if (!webDir || !screenshot || !report || !report.endsWith(".html")) {
  console.error("usage: node check_page.mjs --web-dir DIR --screenshot OUT.png REPORT.html");
  process.exit(2);
}
if (!existsSync(kChromium)) {
  console.error(`check_page: ${kChromium} is not installed (scripts/setup.sh installs chromium); skipping`);
  process.exit(77);
}
// playwright-core is web/'s devDependency, installed by the build's `npm ci`.
const { chromium } = createRequire(join(resolve(webDir), "package.json"))("playwright-core");

const userDataDir = mkdtempSync(join(tmpdir(), "stepscope-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: kChromium, headless: true, args: kChromiumFlags, viewport: { width: 1280, height: 800 },
  offline: true,
});
const result = { console_errors: [], page_errors: [], blocked_requests: [] };
try {
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:")) return route.continue();
    result.blocked_requests.push(url);
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (message) => {
    if (message.type() === "error") result.console_errors.push(message.text());
  });
  page.on("pageerror", (error) => result.page_errors.push(String(error)));
  await page.goto(pathToFileURL(resolve(report)).href, { waitUntil: "load" });
  // The first screen as the page opens (1280x800, not scrolled): where the verdict sentence and
  // the top cause's card end, before any <details> is unfolded.
  result.first_screen = await page.evaluate(() => {
    const bottom = (selector) => {
      const node = document.querySelector(selector);
      return node ? node.getBoundingClientRect().bottom : null;
    };
    return {
      height: window.innerHeight,
      sentence: document.querySelector(".verdict-sentence")?.textContent ?? null,
      sentence_bottom: bottom(".verdict-sentence"),
      top_card_title: document.querySelector(".verdict-card h3")?.textContent ?? null,
      top_card_rule: document.querySelector(".verdict-card")?.getAttribute("data-rule") ?? null,
      top_card_next_step_bottom: bottom(".verdict-card .next-step"),
      top_card_next_step: document.querySelector(".verdict-card .next-step")?.textContent ?? null,
      figures: [...document.querySelectorAll(".figures .figure")].map((f) => f.getAttribute("data-key")),
    };
  });
  // Unfold every <details> as a reader would, so the charts inside get a size. Charts are drawn
  // without animation, but a chart resizes to its newly laid-out box in a later frame: wait until
  // every laid-out canvas has a drawing buffer of its box's size with something drawn in it.
  // Frame by frame, not for a fixed time, so a loaded machine only makes this slower. The limit
  // only keeps a chart that never draws from hanging the test: the checks below then say which.
  await page.evaluate(() => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
  await page
    .waitForFunction(
      () =>
        [...document.querySelectorAll("canvas")].every((canvas) => {
          if (canvas.clientWidth === 0 || canvas.clientHeight === 0) return true;
          const scale = window.devicePixelRatio || 1;
          if (canvas.width !== Math.floor(canvas.clientWidth * scale)) return false;
          if (canvas.height !== Math.floor(canvas.clientHeight * scale)) return false;
          const pixels = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
          for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) return true;
          return false;
        }),
      null,
      { polling: "raf", timeout: 120_000 },
    )
    .catch(() => {});
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  Object.assign(result, await page.evaluate(() => {
    const sections = [...document.querySelectorAll("section[data-section]")].map((s) => ({
      key: s.getAttribute("data-section"),
      title: s.querySelector("h2")?.textContent ?? "",
      available: !s.classList.contains("unavailable"),
      why: s.querySelector(".section-body > p.why")?.textContent ?? null,
      canvases: s.querySelectorAll("canvas").length,
      text: s.innerText,
      notes: [...s.querySelectorAll("p.downsampled")].map((p) => p.textContent),
      // What details.ts renders for a rule's raw Details: key/value tables, nested boxes, JSON.
      dumps: s.querySelectorAll(".details, table.facts, table.rule-dump, pre.json").length,
    }));
    const canvases = [...document.querySelectorAll("canvas")].map((canvas) => {
      const context = canvas.getContext("2d");
      const { width, height } = canvas;
      let drawn = 0;
      if (context && width > 0 && height > 0) {
        const pixels = context.getImageData(0, 0, width, height).data;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) drawn++;
      }
      return { label: canvas.getAttribute("aria-label"), width, height, drawn_pixels: drawn,
               axes: JSON.parse(canvas.getAttribute("data-axes") ?? "{}"),
               series: JSON.parse(canvas.getAttribute("data-series") ?? "[]") };
    });
    return {
      title: document.title,
      h1: document.querySelector("h1")?.textContent ?? "",
      sections,
      canvases,
      images: document.querySelectorAll("img").length,
      hover_cells: [...document.querySelectorAll("td[title]")].map((td) => ({ text: td.textContent, title: td.getAttribute("title") })),
      body_text: document.body.innerText,
      xss: window.__stepscope_xss === 1,
    };
  }));
  await page.screenshot({ path: screenshot, fullPage: true });
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result));
