// #/nodes: each node with its Ready condition, its pods, and what its pods request against
// what it can allocate (cpu, memory, pods) — `kubectl describe node`'s "Allocated resources"
// for every node at once — plus the kubelet's stop/start toggle. Polled once a second from the
// console's shared informers; rows are updated in place, keyed by node name.
import { every, getJSON, h, loadStyle, postJSON, showError } from "../api.js";
import { bytes, cpu, useBar } from "../widgets.js";

function podLinks(pods) {
  if (!pods.length) return h("span", { class: "muted" }, "none");
  const shown = pods.slice(0, 8).map((key) => {
    const [ns, name] = key.split("/");
    return h("a", { href: `#/journey/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`,
                    class: "podlink" }, name);
  });
  return h("span", {}, shown, pods.length > 8 ? ` +${pods.length - 8} more` : "");
}

function toggle(name, action) {
  const button = h("button", { dataset: { action, node: name } }, action === "stop" ? "Stop" : "Start");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await postJSON(`/console-api/actions/nodes/${encodeURIComponent(name)}/${action}`);
    } catch (err) { showError(err); } finally { button.disabled = false; }
  });
  return button;
}

export function mount(root, params) {
  loadStyle("nodes");
  const body = h("tbody");
  const summary = h("span", { class: "muted" });
  root.append(
    h("h1", {}, "Nodes ", summary),
    h("table", { class: "nodes" },
      h("thead", {}, h("tr", {}, ["Name", "Ready", "CPU requests", "Memory requests", "Pods",
                                  "Running here", "Kubelet"].map((t) => h("th", {}, t)))),
      body));
  const rows = new Map();
  let first = true;
  const update = async () => {
    const data = await getJSON("/console-api/nodes");
    const seen = new Set();
    let ready = 0;
    data.items.forEach((node, index) => {
      seen.add(node.name);
      if (node.ready === "True") ready += 1;
      const signature = JSON.stringify(node);
      let row = rows.get(node.name);
      if (!row) {
        row = { tr: h("tr", { dataset: { name: node.name } }), signature: "" };
        rows.set(node.name, row);
      }
      if (body.children[index] !== row.tr) body.insertBefore(row.tr, body.children[index] || null);
      if (row.signature === signature) return;
      row.signature = signature;
      row.tr.dataset.ready = node.ready;
      row.tr.replaceChildren(
        h("td", {}, node.name, node.unschedulable ? h("span", { class: "muted" }, " (cordoned)") : null),
        h("td", {}, h("span", { class: "pill", dataset: { ready: node.ready } },
                      node.ready === "True" ? "Ready" : node.ready === "False" ? "NotReady" : "Unknown")),
        h("td", {}, useBar(node.requested.cpu, node.allocatable.cpu, cpu)),
        h("td", {}, useBar(node.requested.memory, node.allocatable.memory, bytes)),
        h("td", {}, useBar(node.requested.pods, node.allocatable.pods, String)),
        h("td", { class: "pods" }, podLinks(node.pods)),
        h("td", {}, toggle(node.name, "stop"), " ", toggle(node.name, "start")));
    });
    for (const [name, row] of rows) {
      if (!seen.has(name)) { row.tr.remove(); rows.delete(name); }
    }
    summary.textContent = `${ready}/${data.items.length} Ready`;
    root.dataset.count = String(data.items.length);
    root.dataset.ready = String(ready);
    // for bench/console.py: when the first answer's rows are all in the DOM
    if (first) { performance.mark("console:nodes-listed"); first = false; }
  };
  const stop = every(1000, update, showError);
  return { unmount: stop };
}
