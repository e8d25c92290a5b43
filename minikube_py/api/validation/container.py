"""Containers: name, image, ports, env, probes, lifecycle hooks, resources, security context.

Kubernetes pieces: pkg/apis/core/validation (validateContainerCommon, validateContainers,
validateInitContainers, validateContainerPorts, ValidateEnv, ValidateEnvFrom, validateProbe,
validateHandler, validateLifecycle, validatePullPolicy, ValidateSecurityContext,
AccumulateUniqueHostPorts). The per-container rules are shared by regular and init containers;
what differs between the two lists (probes and lifecycle allowed, restartPolicy allowed, how
host ports may collide) is decided in `validate_containers` / `validate_init_containers`.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    PROTOCOLS,
    inclusive_range_error,
    is_config_map_key,
    is_env_var_name,
    is_http_header_name,
    is_valid_port_name,
    name_is_dns_subdomain,
    validate_dns_label,
    validate_nonnegative,
    validate_port_num_or_name,
)
from minikube_py.api.validation.resources import validate_requirements
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_bool,
    get_dict,
    get_int,
    get_str,
    get_str_list,
    index,
    iter_dicts,
)
from minikube_py.api.validation.volumes import (
    ENV_FIELD_PATHS,
    validate_object_field_selector,
    validate_resource_field_selector,
    validate_volume_mounts,
)

PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
HTTP_SCHEMES = ("HTTP", "HTTPS")
PROC_MOUNTS = ("Default", "Unmasked")
MAX_ID = 0xFFFFFFFF


def validate_containers(spec: dict[str, Any], volumes: dict[str, dict[str, Any]], path: str,
                        errs: Errs) -> list[str]:
    """spec.containers: at least one, names unique, host ports unique across all of them.
    Returns the container names (init containers must not reuse them)."""
    list_path = child(path, "containers")
    items = list(iter_dicts(spec, "containers", path, errs))
    if spec.get("containers") is None or spec.get("containers") == []:
        errs.append(required(list_path))
        return []
    grace = spec.get("terminationGracePeriodSeconds")
    names: list[str] = []
    for _, container, c_path in items:
        name = _validate_common(container, volumes, c_path, errs)
        if name in names:
            errs.append(duplicate(child(c_path, "name"), name))
        names.append(name)
        _validate_probes_and_lifecycle(container, grace, c_path, errs)
        if container.get("restartPolicy") is not None:
            errs.append(forbidden(child(c_path, "restartPolicy"),
                                  "may not be set for non-init containers"))
    _host_port_conflicts([(c, p) for _, c, p in items], errs)
    return names


def validate_init_containers(spec: dict[str, Any], volumes: dict[str, dict[str, Any]],
                             names: list[str], path: str, errs: Errs) -> None:
    grace = spec.get("terminationGracePeriodSeconds")
    seen = set(names)
    for _, container, c_path in iter_dicts(spec, "initContainers", path, errs):
        name = _validate_common(container, volumes, c_path, errs)
        restart = container.get("restartPolicy")
        if restart is not None and restart != "Always":
            errs.append(not_supported(child(c_path, "restartPolicy"), restart, ["Always"]))
        if name in seen:
            errs.append(duplicate(child(c_path, "name"), name))
        elif name:
            seen.add(name)
        _host_port_conflicts([(container, c_path)], errs)
        if restart == "Always":
            _validate_probes_and_lifecycle(container, grace, c_path, errs)
            continue
        for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if container.get(probe) is not None:
                errs.append(forbidden(child(c_path, probe), "may not be set for init containers "
                                                            "without restartPolicy=Always"))


def _validate_common(container: dict[str, Any], volumes: dict[str, dict[str, Any]], path: str,
                     errs: Errs) -> str:
    """validateContainerCommon; returns the container's name."""
    name = get_str(container, "name", path, errs, required_=True)
    if name:
        validate_dns_label(name, child(path, "name"), errs)
    get_str(container, "image", path, errs, required_=True)
    policy = get_str(container, "terminationMessagePolicy", path, errs, required_=True)
    if policy and policy not in TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(child(path, "terminationMessagePolicy"), policy,
                                  TERMINATION_MESSAGE_POLICIES))
    _validate_ports(container, path, errs)
    _validate_env(container, path, errs)
    _validate_env_from(container, path, errs)
    validate_volume_mounts(container, volumes, path, errs)
    pull = get_str(container, "imagePullPolicy", path, errs, required_=True)
    if pull and pull not in PULL_POLICIES:
        errs.append(not_supported(child(path, "imagePullPolicy"), pull, PULL_POLICIES))
    resources = get_dict(container, "resources", path, errs)
    if resources is not None:
        validate_requirements(resources, child(path, "resources"), errs)
    get_str_list(container, "command", path, errs)
    get_str_list(container, "args", path, errs)
    _validate_security_context(container, path, errs)
    return name


def _validate_ports(container: dict[str, Any], path: str, errs: Errs) -> None:
    names: set[str] = set()
    for _, port, port_path in iter_dicts(container, "ports", path, errs):
        name = get_str(port, "name", port_path, errs)
        if name:
            msgs = is_valid_port_name(name)
            for msg in msgs:
                errs.append(invalid(child(port_path, "name"), name, msg))
            if not msgs:
                if name in names:
                    errs.append(duplicate(child(port_path, "name"), name))
                names.add(name)
        container_port = get_int(port, "containerPort", port_path, errs)
        if not container_port:
            if port.get("containerPort") in (None, 0):
                errs.append(required(child(port_path, "containerPort")))
        elif not 1 <= container_port <= 65535:
            errs.append(invalid(child(port_path, "containerPort"), container_port,
                                inclusive_range_error(1, 65535)))
        host_port = get_int(port, "hostPort", port_path, errs)
        if host_port and not 1 <= host_port <= 65535:
            errs.append(invalid(child(port_path, "hostPort"), host_port,
                                inclusive_range_error(1, 65535)))
        protocol = get_str(port, "protocol", port_path, errs, required_=True)
        if protocol and protocol not in PROTOCOLS:
            errs.append(not_supported(child(port_path, "protocol"), protocol, PROTOCOLS))
        get_str(port, "hostIP", port_path, errs)


def _host_port_conflicts(containers: list[tuple[dict[str, Any], str]], errs: Errs) -> None:
    """AccumulateUniqueHostPorts: `protocol/hostIP/port` may be claimed once."""
    seen: set[str] = set()
    for container, c_path in containers:
        ports = container.get("ports")
        if not isinstance(ports, list):
            continue
        for i, port in enumerate(ports):
            if not isinstance(port, dict):
                continue
            host_port = port.get("hostPort")
            if not host_port or not isinstance(host_port, int):
                continue
            claim = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host_port}"
            if claim in seen:
                errs.append(duplicate(child(index(child(c_path, "ports"), i), "hostPort"), claim))
            seen.add(claim)


def _validate_env(container: dict[str, Any], path: str, errs: Errs) -> None:
    for _, env, env_path in iter_dicts(container, "env", path, errs):
        name = get_str(env, "name", env_path, errs, required_=True)
        if name:
            for msg in is_env_var_name(name):
                errs.append(invalid(child(env_path, "name"), name, msg))
        value = get_str(env, "value", env_path, errs)
        value_from = get_dict(env, "valueFrom", env_path, errs)
        if value_from is not None:
            _validate_value_from(value_from, value, child(env_path, "valueFrom"), errs)


def _validate_value_from(source: dict[str, Any], value: str, path: str, errs: Errs) -> None:
    count = 0
    field_ref = get_dict(source, "fieldRef", path, errs)
    if field_ref is not None:
        count += 1
        validate_object_field_selector(field_ref, ENV_FIELD_PATHS, child(path, "fieldRef"), errs)
    resource_ref = get_dict(source, "resourceFieldRef", path, errs)
    if resource_ref is not None:
        count += 1
        validate_resource_field_selector(resource_ref, child(path, "resourceFieldRef"), errs,
                                         volume=False)
    for name in ("configMapKeyRef", "secretKeyRef"):
        ref = get_dict(source, name, path, errs)
        if ref is not None:
            count += 1
            _validate_key_selector(ref, child(path, name), errs)
    if count == 0:
        errs.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                      "`configMapKeyRef` or `secretKeyRef`"))
    elif value:
        errs.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(invalid(path, "", "may not have more than one field specified at a time"))


def _validate_key_selector(ref: dict[str, Any], path: str, errs: Errs) -> None:
    name = get_str(ref, "name", path, errs)
    for msg in name_is_dns_subdomain(name, False):
        errs.append(invalid(child(path, "name"), name, msg))
    ref_key = get_str(ref, "key", path, errs, required_=True)
    if ref_key:
        for msg in is_config_map_key(ref_key):
            errs.append(invalid(child(path, "key"), ref_key, msg))


def _validate_env_from(container: dict[str, Any], path: str, errs: Errs) -> None:
    list_path = child(path, "envFrom")
    for _, source, src_path in iter_dicts(container, "envFrom", path, errs):
        prefix = get_str(source, "prefix", src_path, errs)
        if prefix:
            for msg in is_env_var_name(prefix):
                errs.append(invalid(child(src_path, "prefix"), prefix, msg))
        count = 0
        for ref_name in ("configMapRef", "secretRef"):
            ref = get_dict(source, ref_name, src_path, errs)
            if ref is None:
                continue
            count += 1
            ref_path = child(src_path, ref_name)
            name = get_str(ref, "name", ref_path, errs, required_=True)
            if name:
                for msg in name_is_dns_subdomain(name, True):
                    errs.append(invalid(child(ref_path, "name"), name, msg))
        if count == 0:
            errs.append(invalid(list_path, "", "must specify one of: `configMapRef` or "
                                               "`secretRef`"))
        elif count > 1:
            errs.append(invalid(list_path, "", "may not have more than one field specified at "
                                               "a time"))


# ---------------------------------------------------------------------------------------------
# Probes and lifecycle hooks


def _validate_probes_and_lifecycle(container: dict[str, Any], grace: Any, path: str,
                                   errs: Errs) -> None:
    lifecycle = get_dict(container, "lifecycle", path, errs)
    if lifecycle is not None:
        for hook in ("postStart", "preStop"):
            handler = get_dict(lifecycle, hook, child(path, "lifecycle"), errs)
            if handler is not None:
                _validate_handler(handler, grace, child(child(path, "lifecycle"), hook), errs,
                                  ("exec", "httpGet", "tcpSocket", "sleep"))
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = get_dict(container, probe_name, path, errs)
        if probe is None:
            continue
        probe_path = child(path, probe_name)
        _validate_probe(probe, grace, probe_path, errs)
        success = probe.get("successThreshold")
        if probe_name != "readinessProbe" and success != 1 and isinstance(success, int):
            errs.append(invalid(child(probe_path, "successThreshold"), success, "must be 1"))
        probe_grace = probe.get("terminationGracePeriodSeconds")
        if probe_name == "readinessProbe" and probe_grace is not None:
            errs.append(invalid(child(probe_path, "terminationGracePeriodSeconds"),
                                probe["terminationGracePeriodSeconds"],
                                "must not be set for readinessProbes"))


def _validate_probe(probe: dict[str, Any], grace: Any, path: str, errs: Errs) -> None:
    _validate_handler(probe, grace, path, errs, ("exec", "httpGet", "tcpSocket", "grpc"))
    for name in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                 "failureThreshold"):
        validate_nonnegative(get_int(probe, name, path, errs), child(path, name), errs)
    probe_grace = get_int(probe, "terminationGracePeriodSeconds", path, errs)
    if probe_grace is not None and probe_grace <= 0:
        errs.append(invalid(child(path, "terminationGracePeriodSeconds"), probe_grace,
                            "must be greater than 0"))


def _validate_handler(handler: dict[str, Any], grace: Any, path: str, errs: Errs,
                      kinds: tuple[str, ...]) -> None:
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        action_path = child(path, kind)
        if count:
            errs.append(forbidden(action_path, "may not specify more than 1 handler type"))
            continue
        count += 1
        body = get_dict(handler, kind, path, errs)
        if body is not None:
            _validate_action(kind, body, grace, action_path, errs)
    if not count:
        errs.append(required(path, "must specify a handler type"))


def _validate_action(kind: str, action: dict[str, Any], grace: Any, path: str,
                     errs: Errs) -> None:
    if kind == "exec":
        if not get_str_list(action, "command", path, errs):
            errs.append(required(child(path, "command")))
    elif kind == "httpGet":
        get_str(action, "path", path, errs, required_=True)
        validate_port_num_or_name(action.get("port"), child(path, "port"), errs)
        scheme = get_str(action, "scheme", path, errs)
        if scheme not in HTTP_SCHEMES:
            errs.append(not_supported(child(path, "scheme"), scheme, HTTP_SCHEMES))
        for _, header, header_path in iter_dicts(action, "httpHeaders", path, errs):
            header_name = get_str(header, "name", header_path, errs)
            for msg in is_http_header_name(header_name):
                errs.append(invalid(child(path, "httpHeaders"), header_name, msg))
    elif kind == "tcpSocket":
        validate_port_num_or_name(action.get("port"), child(path, "port"), errs)
    elif kind == "grpc":
        port = get_int(action, "port", path, errs)
        validate_port_num_or_name(port if port is not None else 0, child(path, "port"), errs)
    elif kind == "sleep":
        seconds = get_int(action, "seconds", path, errs) or 0
        if isinstance(grace, int) and not isinstance(grace, bool) and not 0 < seconds <= grace:
            errs.append(invalid(path, seconds, "must be greater than 0 and less than "
                                               f"terminationGracePeriodSeconds ({grace}). Enable "
                                               "AllowPodLifecycleSleepActionZeroValue feature "
                                               "gate for zero sleep."))


# ---------------------------------------------------------------------------------------------
# Security context


def validate_id(value: int | None, path: str, errs: Errs) -> None:
    if value is not None and not 0 <= value <= MAX_ID:
        errs.append(invalid(path, value, inclusive_range_error(0, MAX_ID)))


def _validate_security_context(container: dict[str, Any], path: str, errs: Errs) -> None:
    context = get_dict(container, "securityContext", path, errs)
    if context is None:
        return
    sc_path = child(path, "securityContext")
    privileged = get_bool(context, "privileged", sc_path, errs)
    validate_id(get_int(context, "runAsUser", sc_path, errs), child(sc_path, "runAsUser"), errs)
    validate_id(get_int(context, "runAsGroup", sc_path, errs), child(sc_path, "runAsGroup"), errs)
    proc_mount = context.get("procMount")
    if proc_mount is not None and proc_mount not in PROC_MOUNTS:
        errs.append(not_supported(child(sc_path, "procMount"), proc_mount, PROC_MOUNTS))
    if get_bool(context, "allowPrivilegeEscalation", sc_path, errs) is False:
        if privileged:
            errs.append(invalid(sc_path, context, "cannot set `allowPrivilegeEscalation` to "
                                                  "false and `privileged` to true"))
        capabilities = get_dict(context, "capabilities", sc_path, errs) or {}
        if "CAP_SYS_ADMIN" in get_str_list(capabilities, "add", child(sc_path, "capabilities"),
                                           errs):
            errs.append(invalid(sc_path, context, "cannot set `allowPrivilegeEscalation` to "
                                                  "false and `capabilities.Add` CAP_SYS_ADMIN"))
