// #/events: `kubectl get events -A --watch` — the newest events, then each new one as the
// console's shared events watch sees it (SSE, /console-api/events/stream). A row is keyed by
// the Event's namespace/name: a repeated event (its count goes up) replaces its row.
import { h, loadStyle, openStream } from "../api.js";

const MAX_ROWS = 500;

function clock(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleTimeString([], { hour12: false });
}

export function mount(root, params) {
  loadStyle("events");
  const body = h("tbody");
  const state = h("span", { class: "muted", dataset: { stream: "connecting" } }, "connecting…");
  root.append(
    h("h1", {}, "Events ", state),
    h("table", { class: "events" },
      h("thead", {}, h("tr", {}, ["Last seen", "Namespace", "Type", "Reason", "Object", "Source", "Count", "Message"]
        .map((t) => h("th", {}, t)))),
      body));
  const rows = new Map();
  const add = (event) => {
    const old = rows.get(event.key);
    if (old) old.remove();
    const tr = h("tr", { dataset: { key: event.key, type: event.type, reason: event.reason } },
      h("td", { class: "muted time" }, clock(event.time)),
      h("td", { class: "muted" }, event.namespace),
      h("td", { class: event.type === "Warning" ? "warning" : "" }, event.type),
      h("td", {}, event.reason),
      h("td", {}, event.object),
      h("td", { class: "muted" }, event.source),
      h("td", { class: "num" }, String(event.count)),
      h("td", {}, event.message));
    body.prepend(tr);
    rows.set(event.key, tr);
    while (body.children.length > MAX_ROWS) {
      const last = body.lastChild;
      rows.delete(last.dataset.key);
      last.remove();
    }
    root.dataset.count = String(body.children.length);
  };
  const close = openStream("/console-api/events/stream", (event) => {
    add(event);
  }, () => { state.textContent = "reconnecting…"; state.dataset.stream = "reconnecting"; },
  () => { state.textContent = "live"; state.dataset.stream = "live"; });
  return { unmount: close };
}
