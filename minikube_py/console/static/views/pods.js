// #/pods: every pod as `kubectl get pods -A -o wide` shows it — namespace/name, phase,
// conditions, node, age — each linking to its journey (#/journey/<ns>/<name>). Polled once a
// second from the console's shared pod informer; rows keyed by namespace/name.
import { age, every, getJSON, h, loadStyle, showError } from "../api.js";
import { sampleWorkloadForm } from "../widgets.js";

const CONDITIONS = ["PodScheduled", "Initialized", "ContainersReady", "Ready"];

function conditionPills(conditions) {
  return CONDITIONS.filter((c) => c in conditions).map((c) =>
    h("span", { class: `pill cond cond-${conditions[c]}`, dataset: { condition: c, status: conditions[c] },
                title: `${c}=${conditions[c]}` }, c));
}

export function mount(root, params) {
  loadStyle("pods");
  const filter = h("input", { placeholder: "namespace (all)", size: 16, "aria-label": "namespace filter",
                              dataset: { filter: "namespace" } });
  const count = h("span", { class: "muted" });
  const body = h("tbody");
  root.append(
    h("h1", {}, "Pods ", count),
    sampleWorkloadForm(() => update()),
    h("div", { class: "toolbar" }, "Filter:", filter),
    h("table", { class: "pods" },
      h("thead", {}, h("tr", {}, ["Namespace", "Name", "Phase", "Conditions", "Node", "Age"]
        .map((t) => h("th", {}, t)))),
      body));
  const rows = new Map();
  const update = async () => {
    const ns = filter.value.trim();
    const data = await getJSON(`/console-api/pods${ns ? `?namespace=${encodeURIComponent(ns)}` : ""}`);
    const seen = new Set();
    data.items.forEach((pod, index) => {
      const key = `${pod.namespace}/${pod.name}`;
      seen.add(key);
      let row = rows.get(key);
      if (!row) {
        row = { tr: h("tr", { dataset: { name: key } }), signature: "" };
        rows.set(key, row);
      }
      if (body.children[index] !== row.tr) body.insertBefore(row.tr, body.children[index] || null);
      const phase = pod.deleting ? "Terminating" : pod.phase;
      const signature = JSON.stringify([phase, pod.conditions, pod.node]);
      if (row.signature !== signature) {
        row.signature = signature;
        row.tr.dataset.phase = pod.phase;
        row.tr.replaceChildren(
          h("td", {}, pod.namespace),
          h("td", {}, h("a", { href: `#/journey/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}` }, pod.name)),
          h("td", {}, h("span", { class: "pill", dataset: { phase: pod.phase } }, phase)),
          h("td", {}, conditionPills(pod.conditions)),
          h("td", {}, pod.node || h("span", { class: "muted" }, "<none>")),
          h("td", { class: "age" }, ""));
      }
      row.tr.lastChild.textContent = age(pod.age);
    });
    for (const [key, row] of rows) {
      if (!seen.has(key)) { row.tr.remove(); rows.delete(key); }
    }
    count.textContent = `(${data.items.length})`;
    root.dataset.count = String(data.items.length);
    // for bench/console.py: when the first answer's rows are all in the DOM
    if (!performance.getEntriesByName("console:pods-listed").length) {
      performance.mark("console:pods-listed");
    }
  };
  filter.addEventListener("change", () => update().catch(showError));
  const stop = every(1000, update, showError);
  return { unmount: stop };
}
