// Builds a front end: type-checks with tsc (strict, --noEmit), then bundles its entry point into
// one minified IIFE and its style sheet with esbuild. Two bundles share web/src:
//   report     src/main.ts + src/report.css -> report.js, report.css (src/report/html.cmake)
//   dashboard  src/dashboard/main.ts + src/dashboard/dashboard.css -> dashboard.js, dashboard.css
//              (src/server/CMakeLists.txt, served by `stepscope serve`)
// `npm run build` runs it by hand.
//
//   node build.mjs --out DIR [--bundle report|dashboard] [--no-typecheck]

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
if (outIndex < 0 || !args[outIndex + 1]) {
  console.error("build.mjs: usage: node build.mjs --out DIR [--bundle report|dashboard] [--no-typecheck]");
  process.exit(2);
}
const bundles = {
  report: { script: join("src", "main.ts"), style: join("src", "report.css") },
  dashboard: { script: join("src", "dashboard", "main.ts"), style: join("src", "dashboard", "dashboard.css") },
};
const bundleIndex = args.indexOf("--bundle");
const name = bundleIndex < 0 ? "report" : args[bundleIndex + 1];
const bundle = bundles[name];
if (!bundle) {
  console.error(`build.mjs: --bundle must be one of ${Object.keys(bundles).join(", ")}, not "${name}"`);
  process.exit(2);
}
const outDir = resolve(args[outIndex + 1]);
mkdirSync(outDir, { recursive: true });

if (!args.includes("--no-typecheck")) {
  const tsc = join(here, "node_modules", "typescript", "bin", "tsc");
  const result = spawnSync(process.execPath, [tsc, "--noEmit", "-p", join(here, "tsconfig.json")], { stdio: "inherit" });
  if (result.status !== 0) {
    console.error("build.mjs: web/ does not type-check (tsc errors above)");
    process.exit(1);
  }
}

// charset "ascii" (escapes for everything else) lets embed_assets.cmake cut the text anywhere.
const common = { bundle: true, minify: true, logLevel: "warning", legalComments: "eof", charset: "ascii" };
await esbuild.build({
  ...common,
  entryPoints: [join(here, bundle.script)],
  outfile: join(outDir, `${name}.js`),
  format: "iife",
  target: ["es2020"],
  platform: "browser",
});
await esbuild.build({ ...common, entryPoints: [join(here, bundle.style)], outfile: join(outDir, `${name}.css`) });

// The report inlines the bundle into <script> and <style> elements: a closing tag inside would
// end them early. esbuild escapes "</script" in strings; check rather than trust. The embedding
// (embed_assets.cmake) needs ASCII for either bundle.
for (const [file, tag] of [[`${name}.js`, "</script"], [`${name}.css`, "</style"]]) {
  const text = readFileSync(join(outDir, file), "latin1");
  if (text.toLowerCase().includes(tag)) {
    console.error(`build.mjs: ${join(outDir, file)} contains "${tag}", which would end the inlined element early`);
    process.exit(1);
  }
  if (/[^\x00-\x7f]/.test(text)) {
    console.error(`build.mjs: ${join(outDir, file)} is not ASCII (esbuild's charset option changed?)`);
    process.exit(1);
  }
}
