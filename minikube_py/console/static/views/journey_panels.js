// The journey's side panels: a store revision's value and its diff against the key's previous
// revision (also used by the store view), and a scheduling attempt's decision table — per node
// the Filter plugin (v1.x: predicate) that rejected it, per feasible node each Score plugin's
// score x weight, the total, the chosen node first.
import { h } from "../api.js";

const fmt = (v) => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

export function unifiedLines(lines) {
  return h("pre", { class: "unified", dataset: { diff: "unified" } }, lines.map((line) => {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "file"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
    return h("span", { class: `line ${kind}` }, line + "\n");
  }));
}

export function changesTable(changes) {
  if (!changes.length) return h("p", { class: "muted" }, "no field-level changes (a creation or a deletion: see the lines below)");
  return h("table", { class: "changes", dataset: { diff: "changes" } },
    h("thead", {}, h("tr", {}, ["path", "change", "before", "after"].map((t) => h("th", {}, t)))),
    h("tbody", {}, changes.map((c) => h("tr", { class: `op-${c.op}`, dataset: { path: c.path } },
      h("td", {}, h("code", {}, c.path)), h("td", {}, c.op),
      h("td", {}, h("code", {}, fmt(c.old))), h("td", {}, h("code", {}, fmt(c.new)))))));
}

export function valueDiff(data) {
  const cur = data.current;
  const prev = data.previous;
  const title = data.deleted ? `deleted (previous revision ${prev.mod_revision})`
    : `revision ${cur.mod_revision}, version ${cur.version}` + (prev ? ` — diff against revision ${prev.mod_revision}` : " — created");
  const value = cur ? h("details", { class: "value" }, h("summary", {}, `value (${cur.encoding}, ${cur.size} bytes)`),
    h("pre", {}, typeof cur.value === "string" ? cur.value : JSON.stringify(cur.value, null, 2))) : null;
  return [
    h("h2", { dataset: { storeKey: data.key, revision: String(cur ? cur.mod_revision : data.revision) } },
      h("code", {}, data.key)),
    h("p", { class: "muted" }, title),
    changesTable(data.diff.changes),
    unifiedLines(data.diff.unified),
    value,
  ];
}

function scoreCell(part) {
  if (!part) return h("td", { class: "num muted" }, "–");
  return h("td", { class: "num", title: `score ${part.score} x weight ${part.weight}` },
    `${part.score}×${part.weight}=`, h("b", {}, part.weighted));
}

export function decisionTable(t) {
  const head = [h("th", {}, "node"), ...t.filters.map((f) => h("th", { class: "filter" }, f)),
    ...t.scorers.map((s) => h("th", { class: "score" }, `${s.name} (w ${s.weight})`)), h("th", {}, "total")];
  const rows = t.nodes.map((n) => h("tr", {
    class: `${n.chosen ? "chosen" : ""} ${n.feasible ? "feasible" : "rejected"}`,
    dataset: { node: n.name, chosen: String(n.chosen), feasible: String(n.feasible) },
  },
    h("td", {}, n.chosen ? h("b", {}, `★ ${n.name}`) : n.name),
    ...t.filters.map((f) => n.rejected[f]
      ? h("td", { class: "fail", dataset: { filter: f } }, n.rejected[f].join("; ") || "rejected")
      : h("td", { class: n.feasible ? "pass" : "muted" }, n.feasible ? "pass" : "–")),
    ...t.scorers.map((s) => scoreCell(n.scores[s.name])),
    h("td", { class: "num total" }, n.total === null || n.total === undefined ? "–" : String(n.total))));
  const outcome = t.result === "scheduled" ? `→ ${t.node}` : `${t.result}${t.message ? `: ${t.message}` : ""}`;
  return [
    h("h2", { dataset: { decision: t.result } }, "Scheduling decision ", h("code", {}, outcome)),
    h("p", { class: "muted" }, `${t.feasible}/${t.total} nodes fit · ` +
      (t.algorithm === "framework" ? `framework profile ${t.profile}` : "v1.x predicates and priorities (weighted sum per node)") +
      ` · ${(t.seconds * 1000).toFixed(2)} ms` + (t.omitted ? ` · ${t.omitted} more nodes not shown` : "")),
    h("table", { class: "decision", dataset: { table: "decision" } }, h("thead", {}, h("tr", {}, head)), h("tbody", {}, rows)),
    t.filters.length ? null : h("p", { class: "muted" }, "Every node passed every filter."),
  ];
}
