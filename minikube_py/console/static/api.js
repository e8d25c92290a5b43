// The console's client side of /console-api/: JSON reads, JSON actions, SSE streams, and
// per-view stylesheets. Every error answer is a Kubernetes Status; its message is what the
// page shows (showError), never a stack trace.

export class ApiError extends Error {
  constructor(status, code, reason) {
    super(status && status.message ? status.message : `HTTP ${code}`);
    this.code = code;
    this.reason = (status && status.reason) || "";
    this.status = status;
  }
}

async function answer(response) {
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = { message: text }; }
  if (!response.ok) throw new ApiError(body, response.status);
  return body;
}

export async function getJSON(path) {
  return answer(await fetch(path, { headers: { Accept: "application/json" },
                                    credentials: "same-origin" }));
}

export async function postJSON(path, body) {
  return answer(await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body === undefined ? {} : body),
  }));
}

// Follow an SSE stream: onRecord(parsedData, event) per message; returns close().
export function openStream(path, onRecord, onError, onOpen) {
  const source = new EventSource(path, { withCredentials: true });
  source.onmessage = (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    onRecord(data, event);
  };
  if (onError) source.onerror = onError;
  if (onOpen) source.onopen = onOpen;
  return () => source.close();
}

const loaded = new Set();
export function loadStyle(name) {
  if (loaded.has(name)) return;
  loaded.add(name);
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = `/static/views/${name}.css`;
  document.head.appendChild(link);
}

// Poll `fn` every `ms` until stopped; the first call runs at once. Errors go to onError.
export function every(ms, fn, onError) {
  let stopped = false;
  let timer = null;
  const tick = async () => {
    try { await fn(); } catch (err) { if (onError) onError(err); }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

export function showError(err) {
  const banner = document.getElementById("banner");
  if (!banner) return;
  banner.textContent = err instanceof Error ? err.message : String(err);
  banner.dataset.code = err && err.code ? String(err.code) : "";
  banner.hidden = false;
}

export function clearError() {
  const banner = document.getElementById("banner");
  if (banner) banner.hidden = true;
}

// h("td", {class: "x", dataset: {name: "n"}}, "text", child...)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function age(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const s = Math.max(0, Math.floor(seconds));
  if (s < 120) return `${s}s`;
  if (s < 3600 * 2) return `${Math.floor(s / 60)}m`;
  if (s < 86400 * 2) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
