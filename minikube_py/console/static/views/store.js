// #/store and #/store/<key...>: the store's keys as a tree — a prefix's children (directories
// with how many keys they hold, keys with their revisions), one page at a time ("more" reads
// the next page) — and a key's value with its retained history, each revision with its diff
// against the one before. The header shows the store's current and compaction revisions and
// a "compact now" button (etcdctl compact). Everything is read through the Store contract
// (/console-api/store/...). Hooks: rows carry data-key; the header data-revision and
// data-compact-revision; the compact button data-action="compact".
import { getJSON, h, loadStyle, postJSON, showError } from "../api.js";
import { changesTable, unifiedLines, valueDiff } from "./journey_panels.js";

const enc = encodeURIComponent;
const ROOT = "/registry";

export function storeHash(key) {
  return `#/store${key.split("/").filter((p) => p !== "").map((p) => "/" + enc(p)).join("")}`;
}

export function mount(root, params) {
  loadStyle("store");
  loadStyle("journey");
  const path = params.key || ROOT;
  const revs = h("span", { class: "muted revs" });
  const compactButton = h("button", { dataset: { action: "compact" },
    title: "discard the history before the current revision (watchers at older revisions get 410 Gone)" }, "Compact now");
  const crumbs = h("nav", { class: "crumbs" });
  const children = h("div", { class: "children" });
  const keyPanel = h("div", { class: "key-panel" });
  root.append(h("h1", {}, "Store ", revs), h("div", { class: "toolbar" }, crumbs, compactButton),
    h("div", { class: "store-grid" }, children, keyPanel));

  const setRevisions = (data) => {
    revs.textContent = `revision ${data.revision} · compacted to ${data.compact_revision}`;
    root.dataset.revision = String(data.revision);
    root.dataset.compactRevision = String(data.compact_revision);
  };

  const parts = path.split("/").filter((p) => p !== "");
  crumbs.replaceChildren(h("a", { href: "#/store" }, "/"), ...parts.map((part, i) => [
    h("a", { href: storeHash("/" + parts.slice(0, i + 1).join("/")) }, part),
    i < parts.length - 1 ? "/" : ""]).flat());

  const loadPage = async (after, tbody, moreCell) => {
    const query = new URLSearchParams({ prefix: path + "/" });
    if (after) query.set("after", after);
    const data = await getJSON(`/console-api/store/tree?${query}`);
    setRevisions(data);
    for (const c of data.children) {
      const key = c.key;
      tbody.append(h("tr", { dataset: { key, dir: String(c.dir) } },
        h("td", {}, h("a", { href: storeHash(key) }, c.dir ? c.name : c.name)),
        h("td", { class: "num" }, c.dir ? `${c.count} ${c.count === 1 ? "key" : "keys"}` : ""),
        h("td", { class: "num" }, c.dir ? "" : c.mod_revision),
        h("td", { class: "num" }, c.dir ? "" : c.version),
        h("td", { class: "num" }, c.dir ? "" : c.size)));
    }
    moreCell.replaceChildren();
    if (data.more) {
      const more = h("button", { dataset: { action: "more" } }, "more…");
      more.addEventListener("click", () => loadPage(data.next, tbody, moreCell).catch(showError));
      moreCell.append(more);
    }
    return data.children.length;
  };

  const showHistory = async () => {
    let data;
    try {
      data = await getJSON(`/console-api/store/history?key=${enc(path)}`);
    } catch (err) {
      if (err.code === 404) return false;
      throw err;
    }
    setRevisions(data);
    const detail = h("div", { class: "revision-detail" });
    const select = async (row, tr) => {
      for (const t of tbody.querySelectorAll("tr.selected")) t.classList.remove("selected");
      tr.classList.add("selected");
      if (row.type === "PUT") {
        detail.replaceChildren(...valueDiff(await getJSON(`/console-api/store/key?key=${enc(path)}&revision=${row.revision}`)));
      } else {
        detail.replaceChildren(h("h2", {}, `deleted at revision ${row.revision}`),
          changesTable(row.diff ? row.diff.changes : []), unifiedLines(row.diff ? row.diff.unified : []));
      }
    };
    const tbody = h("tbody", {}, data.rows.map((row) => {
      const tr = h("tr", { class: "linked", dataset: { revision: String(row.revision), type: row.type } },
        h("td", { class: "num" }, row.revision + (row.before_history ? " *" : "")), h("td", {}, row.type),
        h("td", { class: "num" }, row.version), h("td", { class: "num" }, row.create_revision),
        h("td", { class: "num" }, row.lease || ""), h("td", { class: "num" }, row.size));
      tr.addEventListener("click", () => select(row, tr).catch(showError));
      return tr;
    }));
    keyPanel.replaceChildren(h("h2", { dataset: { storeKey: path } }, h("code", {}, path)),
      h("p", { class: "muted" }, `history kept from revision ${data.history_from_revision}; newest first — click a revision for its value and diff`),
      h("table", { class: "history", dataset: { table: "history" } },
        h("thead", {}, h("tr", {}, ["revision", "type", "version", "created", "lease", "size"].map((t) => h("th", {}, t)))),
        tbody),
      detail);
    const first = tbody.querySelector("tr");
    if (first) first.click();
    return true;
  };

  const load = async () => {
    const tbody = h("tbody");
    const moreCell = h("div", { class: "more" });
    children.replaceChildren(h("table", { class: "tree", dataset: { table: "tree" } },
      h("thead", {}, h("tr", {}, ["key", "holds", "mod rev", "version", "size"].map((t) => h("th", {}, t)))),
      tbody), moreCell);
    // a directory is not asked for its history: that would replay every write below it
    const count = await loadPage("", tbody, moreCell);
    if (!count) {
      const isKey = await showHistory();
      children.replaceChildren(h("p", { class: "muted" }, isKey ? "" : `nothing under ${path}/`));
      if (isKey) root.classList.add("key-only");
    }
    root.dataset.loaded = "true";
  };

  compactButton.addEventListener("click", async () => {
    compactButton.disabled = true;
    try {
      const data = await postJSON("/console-api/store/compact", {});
      setRevisions(data);
      root.dataset.compacted = String(data.compacted);
    } catch (err) {
      showError(err);
    } finally {
      compactButton.disabled = false;
    }
  });

  load().catch(showError);
  return { unmount() {} };
}
