// The console's shell: a hash router (#/overview, #/nodes, #/pods, #/events,
// #/journey/<ns>/<name>, #/store, #/store/<key...>) that mounts one view module at a time.
// A view is static/views/<name>.js exporting mount(root, params) -> { unmount() }.
import { clearError, h, showError } from "./api.js";

const NAV = [
  ["overview", "Overview"],
  ["nodes", "Nodes"],
  ["pods", "Pods"],
  ["events", "Events"],
  ["store", "Store"],
];

let current = null;

export function parseRoute(hash) {
  const parts = (hash || "").replace(/^#\/?/, "").split("/").filter((p) => p !== "")
    .map(decodeURIComponent);
  const view = parts[0] || "overview";
  if (view === "journey") return { view, params: { namespace: parts[1] || "", name: parts[2] || "" } };
  if (view === "store") return { view, params: { key: parts.length > 1 ? "/" + parts.slice(1).join("/") : "" } };
  return { view, params: { rest: parts.slice(1) } };
}

function renderNav(active) {
  const nav = document.getElementById("nav");
  nav.replaceChildren(...NAV.map(([name, label]) =>
    h("a", { href: `#/${name}`, class: name === active ? "active" : "", dataset: { nav: name } }, label)));
}

async function route() {
  const { view, params } = parseRoute(location.hash);
  renderNav(view);
  clearError();
  if (current) {
    try { current.unmount(); } catch (err) { console.error(err); }
    current = null;
  }
  const root = document.getElementById("view");
  root.replaceChildren();
  const token = Symbol(view);
  root.dataset.mounting = token.toString();
  let module;
  try {
    module = await import(`./views/${view}.js`);
  } catch (err) {
    root.replaceChildren(h("section", { dataset: { view: "missing" } },
      h("h1", {}, "No such view"), h("p", {}, `The console has no view "${view}".`)));
    return;
  }
  if (root.dataset.mounting !== token.toString()) return; // the hash changed meanwhile
  const section = h("section", { dataset: { view } });
  root.replaceChildren(section);
  try {
    current = module.mount(section, params) || null;
  } catch (err) {
    showError(err);
  }
}

window.addEventListener("hashchange", route);
if (!location.hash) history.replaceState(null, "", "#/overview");
route();
