"""Pods and pod templates: the spec on create, what an update may change, the status subresource.

Kubernetes pieces: pkg/apis/core/validation (ValidatePodSpec, validatePodMetadataAndSpec,
ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate, ValidatePodTemplateSpec,
ValidatePodTemplate). A pod's spec is immutable except for container images, a shrinking
activeDeadlineSeconds and added tolerations; anything else is refused with upstream's
`pod updates may not change fields other than ...` at field `spec`, followed by a short list of
what changed (upstream prints a Go struct diff there).
"""

from __future__ import annotations

from typing import Any

import orjson

from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.priority import PREEMPTION_POLICIES
from minikube_py.api.validation.common import (
    NEGATIVE,
    inclusive_range_error,
    name_is_dns_subdomain,
    semantic,
    semantic_equal,
    sub,
    validate_dns_label,
    validate_dns_subdomain,
    validate_ip,
    validate_label_map,
    validate_labels,
    validate_name,
    validate_qualified_name,
)
from minikube_py.api.validation.container import (
    validate_containers,
    validate_id,
    validate_init_containers,
)
from minikube_py.api.validation.meta import (
    metadata,
    validate_annotations,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import validate_requirements
from minikube_py.api.validation.scheduling import (
    validate_affinity,
    validate_tolerations,
    validate_topology_spread,
)
from minikube_py.api.validation.typed import (
    Errs,
    as_list,
    child,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    get_str_list,
    get_str_map,
    index,
    iter_dicts,
)
from minikube_py.api.validation.volumes import validate_volumes

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
OPERATING_SYSTEMS = ("linux", "windows")
MAX_INT32 = 2**31 - 1
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
UPDATABLE_FIELDS = ",".join((
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
))
POD_UPDATE_FORBIDDEN = f"pod updates may not change fields other than {UPDATABLE_FIELDS}"


def validate_pod_spec(spec: dict[str, Any], path: str, errs: Errs, *, is_pod: bool) -> None:
    """ValidatePodSpec: everything a pod or a pod template's spec must satisfy."""
    grace = get_int(spec, "terminationGracePeriodSeconds", path, errs)
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(required(child(path, "terminationGracePeriodSeconds")))
    elif grace is not None and grace < 0:
        errs.append(invalid(child(path, "terminationGracePeriodSeconds"), grace, NEGATIVE))
    volumes = validate_volumes(spec, path, errs)
    names = validate_containers(spec, volumes, path, errs)
    validate_init_containers(spec, volumes, names, path, errs)
    _host_network(spec, path, errs, is_pod)
    _enum(spec, "restartPolicy", RESTART_POLICIES, path, errs)
    _enum(spec, "dnsPolicy", DNS_POLICIES, path, errs)
    validate_label_map(spec, "nodeSelector", path, errs)
    _security_context(spec, path, errs)
    for i, secret in enumerate(get_list(spec, "imagePullSecrets", path, errs) or ()):
        if not isinstance(secret, dict) or set(secret) - {"name"}:
            errs.append(invalid(index(child(path, "imagePullSecrets"), i), secret,
                                "only name may be set"))
    validate_affinity(spec, path, errs)
    _dns_config(spec, path, errs)
    for _, gate, gate_path in iter_dicts(spec, "readinessGates", path, errs):
        validate_qualified_name(get_str(gate, "conditionType", gate_path, errs),
                                child(gate_path, "conditionType"), errs)
    _scheduling_gates(spec, path, errs)
    validate_topology_spread(spec, path, errs)
    for name in ("serviceAccountName", "nodeName", "priorityClassName"):
        value = get_str(spec, name, path, errs)
        if value:
            validate_name(value, child(path, name), errs)
    get_str(spec, "serviceAccount", path, errs)
    get_str(spec, "schedulerName", path, errs)
    deadline = get_int(spec, "activeDeadlineSeconds", path, errs)
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(child(path, "activeDeadlineSeconds"), deadline,
                            inclusive_range_error(1, MAX_INT32)))
    for name in ("hostname", "subdomain"):
        value = get_str(spec, name, path, errs)
        if value:
            validate_dns_label(value, child(path, name), errs)
    validate_tolerations(spec, path, errs)
    for _, alias, alias_path in iter_dicts(spec, "hostAliases", path, errs):
        validate_ip(get_str(alias, "ip", alias_path, errs), child(alias_path, "ip"), errs)
        for j, host in enumerate(get_str_list(alias, "hostnames", alias_path, errs)):
            validate_dns_subdomain(host, index(child(alias_path, "hostnames"), j), errs)
    runtime_class = spec.get("runtimeClassName")
    if runtime_class is not None:
        validate_name(get_str(spec, "runtimeClassName", path, errs),
                      child(path, "runtimeClassName"), errs)
    if spec.get("preemptionPolicy") is not None:
        _enum(spec, "preemptionPolicy", PREEMPTION_POLICIES, path, errs)
    if get_dict(spec, "overhead", path, errs) is not None:
        validate_requirements({"limits": spec["overhead"]}, child(path, "overhead"), errs)
    _os(spec, path, errs)
    get_int(spec, "priority", path, errs)
    for name in ("hostNetwork", "hostPID", "hostIPC", "enableServiceLinks",
                 "automountServiceAccountToken", "shareProcessNamespace", "setHostnameAsFQDN"):
        get_bool(spec, name, path, errs)


def _enum(spec: dict[str, Any], name: str, allowed: tuple[str, ...], path: str,
          errs: Errs) -> None:
    value = get_str(spec, name, path, errs, required_=True)
    if value and value not in allowed:
        errs.append(not_supported(child(path, name), value, allowed))


def _host_network(spec: dict[str, Any], path: str, errs: Errs, is_pod: bool) -> None:
    """With hostNetwork a pod's hostPort must equal its containerPort (0 allowed in templates,
    where defaulting will fill it in later)."""
    if spec.get("hostNetwork") is not True:
        return
    containers = spec.get("containers")
    for i, container in enumerate(containers if isinstance(containers, list) else ()):
        ports = container.get("ports") if isinstance(container, dict) else None
        for j, port in enumerate(ports if isinstance(ports, list) else ()):
            if not isinstance(port, dict):
                continue
            host_port, container_port = port.get("hostPort") or 0, port.get("containerPort") or 0
            if (is_pod or host_port != 0) and host_port != container_port:
                port_path = index(child(index(child(path, "containers"), i), "ports"), j)
                errs.append(invalid(child(port_path, "hostPort"), host_port,
                                    "must match `containerPort` when `hostNetwork` is true"))


def _security_context(spec: dict[str, Any], path: str, errs: Errs) -> None:
    context = get_dict(spec, "securityContext", path, errs)
    if context is None:
        return
    sc_path = child(path, "securityContext")
    for name in ("fsGroup", "runAsUser", "runAsGroup"):
        validate_id(get_int(context, name, sc_path, errs), child(sc_path, name), errs)
    groups = get_list(context, "supplementalGroups", sc_path, errs) or []
    for i, gid in enumerate(groups):
        if isinstance(gid, int) and not isinstance(gid, bool):
            validate_id(gid, index(child(sc_path, "supplementalGroups"), i), errs)


def _dns_config(spec: dict[str, Any], path: str, errs: Errs) -> None:
    config = get_dict(spec, "dnsConfig", path, errs)
    config_path = child(path, "dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if config is None:
            errs.append(required(config_path, "must provide `dnsConfig` when `dnsPolicy` is None"))
            return
        if not config.get("nameservers"):
            errs.append(required(child(config_path, "nameservers"),
                                 "must provide at least one DNS nameserver when `dnsPolicy` is "
                                 "None"))
            return
    if config is None:
        return
    nameservers = get_str_list(config, "nameservers", config_path, errs)
    if len(nameservers) > 3:
        errs.append(invalid(child(config_path, "nameservers"), nameservers,
                            "must not have more than 3 nameservers"))
    for i, server in enumerate(nameservers):
        validate_ip(server, index(child(config_path, "nameservers"), i), errs)
    searches = get_str_list(config, "searches", config_path, errs)
    if len(searches) > 32:
        errs.append(invalid(child(config_path, "searches"), searches,
                            "must not have more than 32 search paths"))
    for i, search in enumerate(searches):
        validate_dns_subdomain(search.removesuffix("."), index(child(config_path, "searches"), i),
                               errs)


def _scheduling_gates(spec: dict[str, Any], path: str, errs: Errs) -> None:
    seen: set[str] = set()
    for _, gate, gate_path in iter_dicts(spec, "schedulingGates", path, errs):
        name = get_str(gate, "name", gate_path, errs)
        validate_qualified_name(name, gate_path, errs)
        if name in seen:
            errs.append(duplicate(gate_path, name))
        seen.add(name)


def _os(spec: dict[str, Any], path: str, errs: Errs) -> None:
    os_spec = get_dict(spec, "os", path, errs)
    if os_spec is None:
        return
    name = get_str(os_spec, "name", child(path, "os"), errs)
    if not name:
        errs.append(required(child(child(path, "os"), "name"), "cannot be empty"))
    elif name not in OPERATING_SYSTEMS:
        errs.append(not_supported(child(path, "os"), name, OPERATING_SYSTEMS))


# ---------------------------------------------------------------------------------------------
# Pods


def _pod_annotations(annotations: dict[str, str], spec: dict[str, Any], path: str,
                     errs: Errs) -> None:
    """ValidatePodSpecificAnnotations (the parts that still apply)."""
    mirror = annotations.get(MIRROR_ANNOTATION)
    if mirror is not None and not spec.get("nodeName"):
        errs.append(invalid(f"{path}[{MIRROR_ANNOTATION}]", mirror,
                            "must set spec.nodeName if mirror pod annotation is set"))
    cost = annotations.get(DELETION_COST_ANNOTATION)
    if cost is not None:
        try:
            ok = -(2**31) <= int(cost, 10) <= MAX_INT32 and cost.strip() == cost
        except ValueError:
            ok = False
        if not ok:
            errs.append(invalid(f"{path}[{DELETION_COST_ANNOTATION}]", cost,
                                "must be a 32bit integer"))


def _pod_metadata_and_spec(pod: dict[str, Any], errs: Errs) -> dict[str, Any]:
    """validatePodMetadataAndSpec; returns the spec."""
    validate_object_meta(pod, True, name_is_dns_subdomain, errs)
    spec = get_dict(pod, "spec", "", errs) or {}
    annotations = get_str_map(metadata(pod, []), "annotations", "metadata", [])
    _pod_annotations(annotations, spec, "metadata.annotations", errs)
    validate_pod_spec(spec, "spec", errs, is_pod=True)
    if not spec.get("serviceAccountName"):
        for i, volume in enumerate(as_list(spec.get("volumes"))):
            sources = sub(volume, "projected", "sources")
            for j, source in enumerate(sources if isinstance(sources, list) else ()):
                if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                    errs.append(forbidden(f"spec.volumes[{i}].projected.sources[{j}]"
                                          ".serviceAccountToken",
                                          "must not be specified when serviceAccountName is "
                                          "not set"))
    for name in ("containers", "initContainers"):
        _image_whitespace(spec, name, errs)
    return spec


def _image_whitespace(spec: dict[str, Any], name: str, errs: Errs) -> None:
    containers = spec.get(name)
    for i, container in enumerate(containers if isinstance(containers, list) else ()):
        image = container.get("image") if isinstance(container, dict) else None
        if isinstance(image, str) and image != image.strip():
            errs.append(invalid(f"spec.{name}[{i}].image", image,
                                "must not have leading or trailing whitespace"))


def validate_pod_create(pod: dict[str, Any], errs: Errs) -> None:
    spec = _pod_metadata_and_spec(pod, errs)
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName",
                              "cannot be set until all schedulingGates have been cleared"))


def validate_pod_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations (and removed
    scheduling gates) may change."""
    validate_object_meta_update(new, old, errs)
    spec = _pod_metadata_and_spec(new, errs)
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    for name in ("containers", "initContainers"):
        if _container_count_changed(spec, old_spec, name, errs):
            return
    _active_deadline_update(spec, old_spec, errs)
    _tolerations_update(spec, old_spec, errs)
    munged = _munge(spec, old_spec, errs)
    if not semantic_equal(munged, old_spec):
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN + "\n" + _diff(old_spec, munged)))


def _container_count_changed(spec: dict[str, Any], old_spec: dict[str, Any], name: str,
                             errs: Errs) -> bool:
    new_list, old_list = spec.get(name) or [], old_spec.get(name) or []
    if not isinstance(new_list, list) or not isinstance(old_list, list):
        return True
    if len(new_list) != len(old_list):
        errs.append(forbidden(f"spec.{name}", "pod updates may not add or remove containers"))
        return True
    for i, container in enumerate(new_list):
        image = container.get("image") if isinstance(container, dict) else None
        if not image:
            errs.append(required(f"spec.{name}[{i}].image"))
    return False


def _active_deadline_update(spec: dict[str, Any], old_spec: dict[str, Any], errs: Errs) -> None:
    new, old = spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if isinstance(new, int) and not isinstance(new, bool):
        if isinstance(old, int) and old < new:
            errs.append(invalid("spec.activeDeadlineSeconds", new,
                                "must be less than or equal to previous value"))
    elif new is None and old is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None,
                            "must not update from a positive integer to nil value"))


def _tolerations_update(spec: dict[str, Any], old_spec: dict[str, Any], errs: Errs) -> None:
    """Existing tolerations stay (only their tolerationSeconds may change); new ones may be
    added."""
    new = [t for t in as_list(spec.get("tolerations")) if isinstance(t, dict)]
    old_list = old_spec.get("tolerations") or ()
    for old in old_list if isinstance(old_list, list) else ():
        if not isinstance(old, dict):
            continue
        if not any(semantic_equal(dict(old, tolerationSeconds=t.get("tolerationSeconds")), t)
                   for t in new):
            errs.append(forbidden("spec.tolerations", "existing toleration can not be modified "
                                                      "except its tolerationSeconds"))
            return


def _munge(spec: dict[str, Any], old_spec: dict[str, Any], errs: Errs) -> dict[str, Any]:
    """The new spec with every field an update may change put back to its old value."""
    munged = dict(spec)
    for name in ("containers", "initContainers"):
        new_list, old_list = spec.get(name), old_spec.get(name)
        if isinstance(new_list, list) and isinstance(old_list, list):
            munged[name] = [
                dict(c, image=o.get("image")) if isinstance(c, dict) and isinstance(o, dict) else c
                for c, o in zip(new_list, old_list, strict=True)
            ]
    for name in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged[name] = old_spec.get(name)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and munged.get(
            "terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if old_spec.get("schedulingGates"):
        new_selector = spec.get("nodeSelector") or {}
        old_selector = old_spec.get("nodeSelector") or {}
        if isinstance(new_selector, dict) and isinstance(old_selector, dict):
            if any(new_selector.get(k) != v for k, v in old_selector.items()):
                errs.append(invalid("spec.nodeSelector", new_selector,
                                    "only additions to spec.nodeSelector are allowed (no "
                                    "mutations or deletions)"))
            munged["nodeSelector"] = old_spec.get("nodeSelector")
    return munged


def _diff(old: Any, new: Any, path: str = "spec", out: list[str] | None = None) -> str:
    """A few `path: old -> new` lines naming what differs (upstream prints a cmp.Diff)."""
    out = [] if out is None else out
    old_n, new_n = semantic(old), semantic(new)
    if old_n == new_n or len(out) >= 10:
        return "\n".join(out)
    if isinstance(old_n, dict) and isinstance(new_n, dict):
        for k in sorted(set(old_n) | set(new_n)):
            _diff(old_n.get(k), new_n.get(k), f"{path}.{k}", out)
    elif isinstance(old_n, list) and isinstance(new_n, list) and len(old_n) == len(new_n):
        for i, (a, b) in enumerate(zip(old_n, new_n, strict=True)):
            _diff(a, b, f"{path}[{i}]", out)
    else:
        out.append(f"  {path}: {_short(old_n)} -> {_short(new_n)}")
    return "\n".join(out)


def _short(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# ---------------------------------------------------------------------------------------------
# Pod templates


def validate_pod_template_spec(template: dict[str, Any], path: str, errs: Errs) -> None:
    """ValidatePodTemplateSpec. Labels and annotations are reported at `<path>.labels`, as
    upstream does (its template metadata is embedded)."""
    meta = get_dict(template, "metadata", path, errs) or {}
    meta_path = child(path, "metadata")
    validate_labels(get_str_map(meta, "labels", meta_path, errs), child(path, "labels"), errs)
    annotations = get_str_map(meta, "annotations", meta_path, errs)
    validate_annotations(annotations, child(path, "annotations"), errs)
    spec = get_dict(template, "spec", path, errs) or {}
    _pod_annotations(annotations, spec, child(path, "annotations"), errs)
    spec_path = child(path, "spec")
    validate_pod_spec(spec, spec_path, errs, is_pod=False)
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(child(spec_path, "ephemeralContainers"),
                              "ephemeral containers not allowed in pod template"))


def validate_pod_template(obj: dict[str, Any], errs: Errs) -> None:
    """The PodTemplate kind."""
    validate_object_meta(obj, True, name_is_dns_subdomain, errs)
    template = get_dict(obj, "template", "", errs) or {}
    validate_pod_template_spec(template, "template", errs)


def validate_pod_template_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    template = get_dict(new, "template", "", errs) or {}
    validate_pod_template_spec(template, "template", errs)
