// #/journey/<ns>/<name>: one pod's way through the control plane as a vertical timeline —
// offsets in ms from the first hop, one column (lane) per component: client, API server,
// store, informers, scheduler, controllers, kubelet. The first answer is what the trace ring
// holds (plus the pod's state now and its key's revisions); then the hops arrive live over
// SSE (/console-api/journey/<ns>/<name>/stream). A store hop opens the revision's value and
// its diff against the key's previous revision; a scheduling hop opens the decision table.
// Hooks: each hop is li[data-seq][data-label][data-lane][data-time] (the record's time in
// seconds: the hop-to-DOM benchmark reads it); the pod's phase is [data-phase].
import { getJSON, h, loadStyle, openStream, showError } from "../api.js";
import { decisionTable, valueDiff } from "./journey_panels.js";

const enc = encodeURIComponent;
// the lanes before the first answer names them (trace/journey.py LANES)
const LANES = ["client", "apiserver", "store", "informers", "scheduler", "controllers", "kubelet"];

export function mount(root, params) {
  loadStyle("journey");
  const { namespace, name } = params;
  const base = `/console-api/journey/${enc(namespace)}/${enc(name)}`;
  const state = h("span", { class: "pill", dataset: { phase: "" } }, "…");
  const facts = h("span", { class: "muted facts" });
  const lanesRow = h("div", { class: "lanes" });
  const list = h("ol", { class: "timeline" });
  const notice = h("p", { class: "muted notice" });
  const panel = h("aside", { class: "panel", dataset: { panel: "" } },
    h("p", { class: "muted" }, "Click a store hop (created, stored) for the value and its diff, " +
      "or a scheduling hop for the scheduler's decision table."));
  const history = h("div", { class: "history" });
  root.append(
    h("h1", {}, "Journey of ", h("code", {}, `${namespace}/${name}`), " ", state, " ", facts),
    h("div", { class: "journey-grid" },
      h("div", { class: "journey-main" }, lanesRow, list, notice),
      h("div", { class: "journey-side" }, panel, h("h2", {}, "Store revisions of the pod's key"), history)));

  let lanes = [];
  let start = null;
  let closeStream = null;
  let stopped = false;
  const seen = new Set();

  const openPanel = async (hop, loader) => {
    for (const li of list.querySelectorAll("li.selected")) li.classList.remove("selected");
    if (hop) hop.classList.add("selected");
    panel.replaceChildren(h("p", { class: "muted" }, "loading…"));
    try {
      panel.replaceChildren(...await loader());
    } catch (err) {
      panel.replaceChildren(h("p", { class: "error" }, err.message));
    }
  };
  const openStore = (li, key, revision) => openPanel(li, async () => {
    panel.dataset.panel = "store";
    const data = await getJSON(`/console-api/store/key?key=${enc(key)}&revision=${revision}`);
    return valueDiff(data);
  });
  const openDecision = (li, seq) => openPanel(li, async () => {
    panel.dataset.panel = "decision";
    const data = await getJSON(`${base}/decision${seq ? `?seq=${seq}` : ""}`);
    return decisionTable(data);
  });

  const addHop = (hop) => {
    if (seen.has(hop.seq)) return;
    seen.add(hop.seq);
    if (start === null) start = hop.time;
    const offset = (hop.time - start) * 1000;
    const col = Math.max(0, lanes.indexOf(hop.lane));
    const link = hop.link || {};
    const li = h("li", {
      class: `hop lane-${hop.lane} label-${hop.label}${link.store || link.decision ? " linked" : ""}`,
      dataset: { seq: String(hop.seq), label: hop.label, lane: hop.lane, time: String(hop.time) },
      // the dot sits in the hop's lane (grid columns 2..8); its text spans the three lanes
      // right of it, or left of it for the lanes at the right edge
      style: `--col: ${col + 2}; --start: ${col + 2 <= 5 ? col + 3 : col - 1}`,
      title: link.store ? "show this revision and its diff" : link.decision ? "show the decision table" : "",
    },
      h("span", { class: "offset" }, `${offset.toFixed(1)} ms`),
      h("span", { class: "dot" }),
      h("span", { class: "mark" },
        h("b", { class: "label" }, hop.label), " ", h("span", { class: "text" }, hop.text)));
    if (link.store) li.addEventListener("click", () => openStore(li, link.store.key, link.store.revision));
    else if (link.decision) li.addEventListener("click", () => openDecision(li, link.decision));
    list.append(li);
    root.dataset.hops = String(seen.size);
    if (root.dataset.waiting) {
      delete root.dataset.waiting;
      notice.textContent = "";
    }
    if (["created", "bound", "running", "kubelet"].includes(hop.label)) refreshState().catch(() => {});
  };

  const setState = (pod) => {
    if (!pod) {
      state.textContent = "gone";
      state.dataset.phase = "Unknown";
      root.dataset.phase = "";
      return;
    }
    state.textContent = pod.phase || "Pending";
    state.dataset.phase = pod.phase || "";
    root.dataset.phase = pod.phase || "";
    facts.textContent = ` node ${pod.node || "<none>"} · ready ${pod.ready}${pod.podIP ? ` · ip ${pod.podIP}` : ""}`;
  };

  const renderHistory = (key, rows) => {
    if (!key) { history.replaceChildren(h("p", { class: "muted" }, "unknown key")); return; }
    history.replaceChildren(
      h("p", {}, h("a", { href: `#/store${key.split("/").map(enc).join("/")}`, dataset: { storeLink: key } }, key)),
      h("table", { class: "revisions" },
        h("thead", {}, h("tr", {}, ["revision", "type", "version", "size"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows.map((row) => {
          const tr = h("tr", { class: "linked", dataset: { revision: String(row.revision) } },
            h("td", { class: "num" }, row.revision), h("td", {}, row.type),
            h("td", { class: "num" }, row.version), h("td", { class: "num" }, row.size));
          tr.addEventListener("click", () => openStore(null, key, row.revision));
          return tr;
        }))));
  };

  // one refresh at a time; a hop arriving meanwhile asks for one more round (so the last
  // state shown is read after the last hop)
  let refreshing = false;
  let again = false;
  const refreshState = async () => {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      do {
        again = false;
        const data = await getJSON(base);
        if (stopped) return;
        setState(data.pod);
        renderHistory(data.key, data.history);
      } while (again);
    } finally { refreshing = false; }
  };

  (async () => {
    let data;
    try {
      data = await getJSON(base);
    } catch (err) {
      if (err.code !== 404) {
        root.dataset.error = String(err.code || "");
        showError(err);
        return;
      }
      // no such pod (yet): wait for it — the stream replays what the ring gets of it
      root.dataset.waiting = "true";
      data = { lanes: LANES, pod: null, key: "", history: [], hops: [], lost: 0, last_seq: 0,
               missing: err.message };
    }
    if (stopped) return;
    lanes = data.lanes;
    lanesRow.replaceChildren(h("span", { class: "offset" }, "offset"),
      ...lanes.map((lane, i) => h("span", { class: `lane-head lane-${lane}`, style: `--col: ${i + 2}` }, lane)));
    if (data.missing) {
      state.textContent = "not found";
      state.dataset.phase = "Unknown";
    } else {
      setState(data.pod);
    }
    renderHistory(data.key, data.history);
    data.hops.forEach(addHop);
    notice.textContent = data.missing ? `${data.missing}: waiting for it — its hops appear here as it is created.`
      : data.hops.length ? (data.lost ? `${data.lost} earlier records are no longer in the trace ring.` : "")
      : "The trace ring holds nothing of this pod yet: it records while someone watches " +
        "(this view does now; `minikube-py start --trace` records from the start). Its state now " +
        "and its store revisions are shown; new hops appear here live.";
    const query = new URLSearchParams({ since: String(data.last_seq) });
    if (start !== null) query.set("start", String(start));
    // live once the stream is open: the server attaches its trace viewer (which turns the
    // ring on) before it answers, so from here on every hop of the pod is recorded
    closeStream = openStream(`${base}/stream?${query}`, addHop, undefined, () => {
      root.dataset.live = "true";
    });
  })();

  return {
    unmount() {
      stopped = true;
      if (closeStream) closeStream();
    },
  };
}
