// #/overview: v1.0's architecture as a live diagram — the store, the API server, and the
// components that talk only to it — with each component's requests per second on its arrow
// (counted from the trace ring's request records), the store's revision, nodes by Ready and
// pods by phase. One JSON (/console-api/overview) polled once a second.
import { every, getJSON, h, loadStyle, postJSON, showError } from "../api.js";
import { sampleWorkloadForm } from "../widgets.js";

const SVG = "http://www.w3.org/2000/svg";

// box: [id, label, x, y, w, h, the end of its arrow on the API server (x, y)]
const BOXES = [
  ["scheduler", "kube-scheduler", 30, 20, 200, 56, [370, 170]],
  ["controller-manager", "kube-controller-manager", 310, 20, 220, 56, [420, 170]],
  ["kubelet", "kubelets", 610, 20, 200, 56, [470, 170]],
  ["clients", "kubectl & other clients", 20, 185, 190, 56, [320, 213]],
  ["informers", "shared informers", 630, 185, 190, 56, [520, 213]],
];

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function box(id, label, x, y, w, hgt, cls) {
  const g = svg("g", { "data-box": id, class: `box ${cls || ""}` });
  g.append(svg("rect", { x, y, width: w, height: hgt, rx: 6 }));
  g.append(svg("text", { x: x + w / 2, y: y + 23, class: "label" }, label));
  g.append(svg("text", { x: x + w / 2, y: y + 42, class: "sub", "data-sub": id }, ""));
  return g;
}

function diagram() {
  const root = svg("svg", { viewBox: "0 0 840 410", class: "diagram", role: "img",
                            "aria-label": "architecture" });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
                                 markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }));
  defs.append(marker);
  root.append(defs);
  const arrows = svg("g", { class: "arrows" });
  root.append(arrows);
  for (const [id, label, x, y, w, hgt, [ex, ey]] of BOXES) {
    const sx = x + w / 2 < ex - 40 ? x + w : x + w / 2 > ex + 40 ? x : x + w / 2;
    const sy = y + hgt < ey - 20 ? y + hgt : y + hgt / 2;
    const both = id === "informers" ? { "marker-start": "url(#arrow)" } : {};
    arrows.append(svg("line", { x1: sx, y1: sy, x2: ex, y2: ey, "marker-end": "url(#arrow)",
                                class: "arrow", "data-arrow": id, ...both }));
    // the label beside its arrow: left of a left arrow, right of the others, above a flat one
    const flat = sy === ey;
    const anchor = flat ? "middle" : sx < ex - 40 ? "end" : "start";
    const tx = (sx + ex) / 2 + (flat ? 0 : anchor === "end" ? -6 : 8);
    const ty = (sy + ey) / 2 - (flat ? 22 : 6);
    const rate = svg("text", { x: tx, y: ty, class: "rate", "data-rate": id, "text-anchor": anchor });
    rate.append(svg("tspan", { x: tx, dy: 0, "data-line": "requests" }, "–"),
                svg("tspan", { x: tx, dy: 14, "data-line": "events", class: "events" }, ""));
    arrows.append(rate);
    root.append(box(id, label, x, y, w, hgt));
  }
  root.append(box("apiserver", "kube-apiserver", 320, 170, 200, 70, "core"));
  arrows.append(svg("line", { x1: 420, y1: 240, x2: 420, y2: 318, "marker-end": "url(#arrow)",
                              "marker-start": "url(#arrow)", class: "arrow", "data-arrow": "store" }));
  arrows.append(svg("text", { x: 430, y: 284, class: "rate", "data-rate": "store",
                              "text-anchor": "start" }, "–"));
  root.append(box("store", "store (MVCC, etcd-shaped)", 295, 320, 250, 70, "core"));
  return root;
}

function num(r) {
  return r >= 10 ? String(Math.round(r)) : r.toFixed(1);
}

// the two lines of an arrow's label: requests made, watch events received
function fmtRate(id, requests, events) {
  if (id === "informers") return [`${num(events)} watch ev/s`, ""];
  return [`${num(requests)} req/s`, events ? `${num(events)} watch ev/s` : ""];
}

export function mount(root, params) {
  loadStyle("overview");
  const picture = diagram();
  const nodes = h("div", { class: "card stat", dataset: { stat: "nodes" } });
  const pods = h("div", { class: "card stat", dataset: { stat: "pods" } });
  const revision = h("div", { class: "card stat", dataset: { stat: "revision" } });
  const pausable = h("div", { class: "card", dataset: { panel: "components" } });
  root.append(
    h("h1", {}, "Overview"),
    h("div", { class: "overview" },
      h("div", { class: "card picture" }, picture),
      h("div", { class: "grid side" }, revision, nodes, pods, pausable)),
    sampleWorkloadForm());

  let last = null;
  const update = async () => {
    const data = await getJSON("/console-api/overview");
    root.dataset.revision = String(data.revision);
    const now = performance.now();
    let storeRate = null;
    if (last) storeRate = ((data.revision - last.revision) * 1000) / Math.max(1, now - last.at);
    last = { revision: data.revision, at: now };
    const requests = data.rates.requests, events = data.rates.watchEvents;
    for (const [id] of BOXES) {
      const text = picture.querySelector(`[data-rate="${id}"]`);
      const [first, second] = fmtRate(id, requests[id] || 0, events[id] || 0);
      text.querySelector('[data-line="requests"]').textContent = first;
      text.querySelector('[data-line="events"]').textContent = second;
      text.dataset.value = String(requests[id] || 0);
      text.dataset.events = String(events[id] || 0);
    }
    const storeText = picture.querySelector('[data-rate="store"]');
    storeText.textContent = storeRate === null ? "writes/s: –"
      : `${storeRate.toFixed(1)} writes/s`;
    picture.querySelector('[data-sub="store"]').textContent = `revision ${data.revision}`;
    picture.querySelector('[data-sub="kubelet"]').textContent =
      `${data.nodes.ready}/${data.nodes.total} nodes Ready`;
    picture.querySelector('[data-sub="apiserver"]').textContent =
      `${num(Object.values(requests).reduce((a, b) => a + b, 0))} req/s in`;
    revision.replaceChildren(h("div", { class: "big", dataset: { value: data.revision } }, String(data.revision)),
                             h("div", { class: "muted" }, "store revision"));
    if (!performance.getEntriesByName("console:overview-shown").length) {
      performance.mark("console:overview-shown"); // for bench/console.py
    }
    nodes.replaceChildren(
      h("div", { class: "big" }, `${data.nodes.ready}/${data.nodes.total}`),
      h("div", { class: "muted" }, h("a", { href: "#/nodes" }, "nodes Ready")),
      h("div", { dataset: { ready: data.nodes.notReady ? "False" : "True" } },
        data.nodes.notReady ? `${data.nodes.notReady} not Ready` : ""));
    const phases = ["Pending", "Running", "Succeeded", "Failed", "Unknown"]
      .filter((p) => data.pods[p] || p === "Running" || p === "Pending")
      .map((p) => h("span", { class: "pill", dataset: { phase: p, count: data.pods[p] } }, `${p} ${data.pods[p]}`));
    pods.replaceChildren(h("div", { class: "big" }, String(data.pods.total)),
                         h("div", { class: "muted" }, h("a", { href: "#/pods" }, "pods")),
                         h("div", { class: "phases" }, phases));
  };
  const updateComponents = async () => {
    const data = await getJSON("/console-api/components");
    if (data.pausable === null) {
      pausable.replaceChildren(h("div", { class: "muted" }, "Components: ", data.components.join(", ")),
                               h("div", { class: "muted" }, "(pausing is not available in this build)"));
      return;
    }
    const gates = [...data.pausable].sort((a, b) =>
      (a.kind === "scheduler" ? 0 : 1) - (b.kind === "scheduler" ? 0 : 1) || a.name.localeCompare(b.name));
    const rows = gates.map((gate) => {
      const action = gate.paused ? "resume" : "pause";
      const button = h("button", { dataset: { action, component: gate.name } },
                       gate.paused ? "Resume" : "Pause");
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await postJSON(`/console-api/actions/components/${encodeURIComponent(gate.name)}/${action}`);
          await updateComponents();
          await update();
        } catch (err) { showError(err); } finally { button.disabled = false; }
      });
      return h("tr", { dataset: { name: gate.name, paused: String(gate.paused) } },
               h("td", { title: gate.kind }, gate.name),
               h("td", { class: gate.paused ? "paused" : "muted" }, gate.paused ? "paused" : "running"),
               h("td", {}, button));
    });
    pausable.replaceChildren(h("div", { class: "muted" }, "Pause a component"),
                             h("div", { class: "gates" },
                               h("table", { class: "compact" }, h("tbody", {}, rows))));
    // the diagram says which boxes are paused
    const scheduler = data.pausable.find((g) => g.kind === "scheduler" && g.name === "scheduler");
    const paused = data.pausable.filter((g) => g.kind === "controller" && g.paused).length;
    const schedulerBox = picture.querySelector('[data-box="scheduler"]');
    schedulerBox.dataset.paused = String(Boolean(scheduler && scheduler.paused));
    picture.querySelector('[data-sub="scheduler"]').textContent = scheduler && scheduler.paused ? "paused" : "";
    picture.querySelector('[data-box="controller-manager"]').dataset.paused = String(paused > 0);
    picture.querySelector('[data-sub="controller-manager"]').textContent =
      paused ? `${paused} controller${paused > 1 ? "s" : ""} paused` : "";
  };
  const stopPoll = every(1000, update, showError);
  const stopComponents = every(2000, updateComponents, showError);
  return { unmount() { stopPoll(); stopComponents(); } };
}
