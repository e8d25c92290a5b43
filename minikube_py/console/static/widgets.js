// Pieces more than one view shows: the sample-workload form and a resource-use bar.
import { clearError, h, postJSON, showError } from "./api.js";

// The "create a sample workload" form: POST /console-api/actions/sample-workload.
export function sampleWorkloadForm(onCreated) {
  const namespace = h("input", { name: "namespace", value: "default", size: 10, "aria-label": "namespace" });
  const name = h("input", { name: "name", value: "sample", size: 10, "aria-label": "name" });
  const replicas = h("input", { name: "replicas", type: "number", value: "3", min: "0", max: "500",
                                style: "width:5em", "aria-label": "replicas" });
  const result = h("span", { class: "muted", dataset: { result: "" } });
  const button = h("button", { type: "submit", dataset: { action: "sample-workload" } }, "Create");
  const form = h("form", { class: "toolbar", dataset: { form: "sample-workload" } },
    h("strong", {}, "Sample workload:"), "namespace", namespace, "name", name, "replicas", replicas,
    button, result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const count = Number(replicas.value);
      const created = await postJSON("/console-api/actions/sample-workload", {
        namespace: namespace.value, name: name.value,
        replicas: Number.isInteger(count) ? count : replicas.value });
      clearError();
      result.textContent = `deployment ${created.namespace}/${created.name}: ${created.replicas} replicas`;
      if (onCreated) onCreated(created);
    } catch (err) {
      result.textContent = "";
      showError(err);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

// A used/total bar with its text (requests against allocatable).
export function useBar(used, total, format) {
  const pct = total > 0 ? Math.min(100, Math.round((100 * used) / total)) : 0;
  const bar = h("span", { class: "bar", title: `${pct}%` }, h("span", { style: `width:${pct}%` }));
  return h("span", { class: "use" }, bar, ` ${format(used)} / ${format(total)}`);
}

export function cpu(milli) {
  return milli % 1000 === 0 ? `${milli / 1000}` : `${milli}m`;
}

export function bytes(n) {
  const units = ["", "Ki", "Mi", "Gi", "Ti"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) { n /= 1024; i += 1; }
  return `${n}${units[i]}`;
}
