// The dashboard's hash routes: one page per route, so a link, the back button and a reload land
// on the same page of the same run.
//
//   #/                         job list
//   #/run/ID/overview|nodes|gpu|timeline|control
//   #/compare/ID,ID[,...]

export const kRunPages = ["overview", "nodes", "gpu", "timeline", "control"] as const;
export type RunPage = (typeof kRunPages)[number];

export type Route =
  | { page: "jobs" }
  | { page: RunPage; run: string }
  | { page: "compare"; runs: string[] };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter((p) => p !== "").map(decodeURIComponent);
  if (parts[0] === "run" && parts[1]) {
    const page = (kRunPages as readonly string[]).includes(parts[2] ?? "") ? (parts[2] as RunPage) : "overview";
    return { page, run: parts[1] };
  }
  if (parts[0] === "compare" && parts[1]) return { page: "compare", runs: parts[1].split(",").filter((id) => id !== "") };
  return { page: "jobs" };
}

export function routeHref(route: Route): string {
  switch (route.page) {
    case "jobs": return "#/";
    case "compare": return `#/compare/${route.runs.map(encodeURIComponent).join(",")}`;
    default: return `#/run/${encodeURIComponent(route.run)}/${route.page}`;
  }
}
