"""A container's environment and files as the simulated shell sees them.

Kubernetes piece: pkg/kubelet/kubelet_pods.go makeEnvironmentVariables (service links from
pkg/kubelet/envvars FromServices, `env` with `valueFrom` fieldRef / resourceFieldRef /
configMapKeyRef / secretKeyRef, `envFrom` with prefixes, `$(VAR)` expansion) and the
configMap / secret / downwardAPI / projected / emptyDir volume plugins (pkg/volume/...), which
write a volume's keys as files under its mountPath. No container runs, so the kubelet builds
the same picture in memory for `kubectl exec` (shell.py). Pure: the streaming endpoint reads
the ConfigMaps, Secrets and Services named here through the API client and passes them in.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from typing import Any

from ..api.quantity import parse_quantity
from .shell_fs import PATH, Sandbox

Obj = dict[str, Any]
#: (namespace, name) -> object, for what `references` asked for (missing ones absent)
Objects = Mapping[str, Obj]

#: (audience or "", expirationSeconds) -> token, for projected serviceAccountToken sources
Tokens = Mapping[tuple[str, int], bytes]
#: upstream's default expirationSeconds of a serviceAccountToken projection
DEFAULT_TOKEN_SECONDS = 3600

_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_FIELD_KEY = re.compile(r"metadata\.(labels|annotations)\['([^']*)'\]")


def find_container(pod: Obj, name: str) -> Obj | None:
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if c.get("name") == name:
            return c
    return None


# -- what must be read --------------------------------------------------------------------
def token_key(source: Obj) -> tuple[str, int]:
    """The key of a serviceAccountToken projection in `Tokens`: (audience, expirationSeconds)."""
    exp = source.get("expirationSeconds")
    if not isinstance(exp, int) or isinstance(exp, bool):
        exp = DEFAULT_TOKEN_SECONDS
    return str(source.get("audience") or ""), exp


def references(pod: Obj, container: Obj) -> tuple[set[str], set[str]]:
    """The ConfigMap and Secret names the container's env and mounted volumes use."""
    configmaps: set[str] = set()
    secrets: set[str] = set()
    for env in container.get("env") or []:
        source = env.get("valueFrom") or {}
        if (ref := source.get("configMapKeyRef")) and ref.get("name"):
            configmaps.add(ref["name"])
        if (ref := source.get("secretKeyRef")) and ref.get("name"):
            secrets.add(ref["name"])
    for source in container.get("envFrom") or []:
        if (ref := source.get("configMapRef")) and ref.get("name"):
            configmaps.add(ref["name"])
        if (ref := source.get("secretRef")) and ref.get("name"):
            secrets.add(ref["name"])
    for volume in _mounted_volumes(pod, container).values():
        if (cm := volume.get("configMap")) and cm.get("name"):
            configmaps.add(cm["name"])
        if (secret := volume.get("secret")) and secret.get("secretName"):
            secrets.add(secret["secretName"])
        for projected in (volume.get("projected") or {}).get("sources") or []:
            if (cm := projected.get("configMap")) and cm.get("name"):
                configmaps.add(cm["name"])
            if (secret := projected.get("secret")) and secret.get("name"):
                secrets.add(secret["name"])
    return configmaps, secrets


def _mounted_volumes(pod: Obj, container: Obj) -> dict[str, Obj]:
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    return {m.get("name"): volumes[m.get("name")] for m in container.get("volumeMounts") or []
            if m.get("name") in volumes}


# -- values -------------------------------------------------------------------------------
def _configmap_data(cm: Obj) -> dict[str, bytes]:
    data = {k: str(v).encode() for k, v in (cm.get("data") or {}).items()}
    for key, value in (cm.get("binaryData") or {}).items():
        data[key] = _b64(value)
    return data


def _secret_data(secret: Obj) -> dict[str, bytes]:
    data = {k: _b64(v) for k, v in (secret.get("data") or {}).items()}
    data.update({k: str(v).encode() for k, v in (secret.get("stringData") or {}).items()})
    return data


def _b64(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=False)
    except (ValueError, TypeError):
        return b""


def field_value(pod: Obj, path: str, pod_ip: str = "", host_ip: str = "") -> str | None:
    """The downward API's fieldRef values (pkg/fieldpath ExtractFieldPathAsString)."""
    md = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if (match := _FIELD_KEY.fullmatch(path)) is not None:
        return (md.get(match.group(1)) or {}).get(match.group(2), "")
    if path in ("metadata.labels", "metadata.annotations"):
        items = md.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(items.items()))
    simple = {
        "metadata.name": md.get("name"), "metadata.namespace": md.get("namespace"),
        "metadata.uid": md.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
        "status.podIP": pod_ip or status.get("podIP"),
        "status.podIPs": pod_ip or status.get("podIP"),
        "status.hostIP": host_ip or status.get("hostIP"),
        "status.hostIPs": host_ip or status.get("hostIP"),
    }
    if path not in simple:
        return None
    return str(simple[path] or "")


def resource_value(container: Obj, ref: Obj, allocatable: Mapping[str, str]) -> str | None:
    """resourceFieldRef (pkg/api/v1/resource ExtractContainerResourceValue): the limit, or the
    node's allocatable when there is none; divided by `divisor` and rounded up."""
    resource = ref.get("resource") or ""
    kind, _, name = resource.partition(".")
    if kind not in ("limits", "requests") or not name:
        return None
    resources = container.get("resources") or {}
    value = (resources.get(kind) or {}).get(name)
    if value is None and kind == "limits":
        value = allocatable.get(name)
    if value is None:
        value = "0"
    try:
        amount = parse_quantity(value)
        divisor = parse_quantity(ref.get("divisor") or "1")
    except ValueError:
        return None
    if not divisor:
        return None
    return str(math.ceil(amount / divisor))


def expand(value: str, env: Mapping[str, str]) -> str:
    """`$(VAR)` references to variables defined earlier; `$$` is a literal `$`."""

    def sub(match: re.Match[str]) -> str:
        if match.group() == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group()

    return _REF.sub(sub, value)


def service_env(services: list[Obj]) -> dict[str, str]:
    """Docker-links-style variables for each service with a cluster IP (envvars.FromServices):
    `WEB_SERVICE_HOST`, `WEB_SERVICE_PORT`, `WEB_PORT=tcp://10.0.0.7:80`, ..."""
    out: dict[str, str] = {}
    for svc in services:
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP") or ""
        if not ip or ip == "None":
            continue
        name = svc["metadata"]["name"].upper().replace("-", "_")
        ports = spec.get("ports") or []
        out[f"{name}_SERVICE_HOST"] = ip
        if not ports:
            continue
        first = ports[0]
        out[f"{name}_SERVICE_PORT"] = str(first.get("port"))
        for port in ports:
            if port.get("name"):
                out[f"{name}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = \
                    str(port.get("port"))
        out[f"{name}_PORT"] = f"{(first.get('protocol') or 'TCP').lower()}://{ip}:{first.get('port')}"
        for port in ports:
            proto = port.get("protocol") or "TCP"
            prefix = f"{name}_PORT_{port.get('port')}_{proto.upper()}"
            out[prefix] = f"{proto.lower()}://{ip}:{port.get('port')}"
            out[f"{prefix}_PROTO"] = proto.lower()
            out[f"{prefix}_PORT"] = str(port.get("port"))
            out[f"{prefix}_ADDR"] = ip
    return out


def container_env(pod: Obj, container: Obj, *, configmaps: Objects, secrets: Objects,
                  services: list[Obj], pod_ip: str = "", host_ip: str = "",
                  allocatable: Mapping[str, str] | None = None, tty: bool = False) -> dict[str, str]:
    """What `env` prints in the container: PATH and HOSTNAME from the runtime, the service
    links, then `envFrom` and `env` in order (later wins), then HOME (and TERM with a tty).
    Values that cannot be resolved (a missing, optional key) are left out, as upstream."""
    name = (pod.get("metadata") or {}).get("name", "")
    env: dict[str, str] = {"PATH": PATH, "HOSTNAME": name}
    env.update(service_env(services))
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        data: dict[str, bytes] = {}
        if (ref := source.get("configMapRef")) and ref.get("name") in configmaps:
            data = _configmap_data(configmaps[ref["name"]])
        elif (ref := source.get("secretRef")) and ref.get("name") in secrets:
            data = _secret_data(secrets[ref["name"]])
        for key, value in data.items():
            env[prefix + key] = value.decode(errors="replace")
    for var in container.get("env") or []:
        key = var.get("name")
        if not key:
            continue
        if "value" in var or not var.get("valueFrom"):
            env[key] = expand(str(var.get("value") or ""), env)
            continue
        value = _value_from(pod, container, var["valueFrom"], configmaps, secrets, pod_ip,
                            host_ip, allocatable or {})
        if value is not None:
            env[key] = value
    env.setdefault("HOME", "/root")
    if tty:
        env.setdefault("TERM", "xterm")
    return env


def _value_from(pod: Obj, container: Obj, source: Obj, configmaps: Objects, secrets: Objects,
                pod_ip: str, host_ip: str, allocatable: Mapping[str, str]) -> str | None:
    if (ref := source.get("fieldRef")) is not None:
        return field_value(pod, ref.get("fieldPath") or "", pod_ip, host_ip)
    if (ref := source.get("resourceFieldRef")) is not None:
        return resource_value(container, ref, allocatable)
    if (ref := source.get("configMapKeyRef")) is not None:
        data = _configmap_data(configmaps.get(ref.get("name") or "") or {})
        value = data.get(ref.get("key") or "")
        return None if value is None else value.decode(errors="replace")
    if (ref := source.get("secretKeyRef")) is not None:
        data = _secret_data(secrets.get(ref.get("name") or "") or {})
        value = data.get(ref.get("key") or "")
        return None if value is None else value.decode(errors="replace")
    return None


# -- files --------------------------------------------------------------------------------
def subpath(mount: Obj, env: Mapping[str, str]) -> str:
    """makeMounts: the mount's `subPath`, or its `subPathExpr` with `$(VAR)` expanded from the
    container's env. Raises ValueError with upstream's message when the result is absolute
    or climbs out of the volume with `..` (the container then fails with
    CreateContainerConfigError)."""
    sub = str(mount.get("subPath") or "")
    if mount.get("subPathExpr"):
        sub = expand(str(mount["subPathExpr"]), env)
    if sub.startswith("/"):
        raise ValueError(f"error SubPath `{sub}` must not be an absolute path")
    if ".." in sub.split("/"):
        raise ValueError(f"unable to provision SubPath `{sub}`: must not contain '..'")
    return sub


def config_error(pod: Obj, container: Obj) -> str | None:
    """Why the runtime cannot be given this container's config (upstream's
    generateContainerConfig errors that the spec alone decides): a bad subPath(Expr). The env
    used is the spec's own (values, fieldRefs); variables from ConfigMaps and Secrets are not
    known here and expand to nothing."""
    if not any((m or {}).get("subPathExpr") or (m or {}).get("subPath")
               for m in container.get("volumeMounts") or ()):
        return None
    env = container_env(pod, container, configmaps={}, secrets={}, services=[])
    for mount in container.get("volumeMounts") or ():
        try:
            subpath(mount or {}, env)
        except ValueError as exc:
            return str(exc)
    return None


def _keyed(data: dict[str, bytes], items: list[Obj] | None) -> dict[str, bytes]:
    if not items:
        return dict(data)
    return {item.get("path") or item.get("key"): data[item.get("key")]
            for item in items if item.get("key") in data}


def volume_contents(pod: Obj, volume: Obj, configmaps: Objects, secrets: Objects,
                    pod_ip: str = "", tokens: Tokens | None = None) -> dict[str, bytes] | None:
    """Relative path -> bytes of what a volume holds; None for a volume of a kind that is not
    simulated (it mounts as an empty directory)."""
    if (cm := volume.get("configMap")) is not None:
        return _keyed(_configmap_data(configmaps.get(cm.get("name") or "") or {}), cm.get("items"))
    if (secret := volume.get("secret")) is not None:
        return _keyed(_secret_data(secrets.get(secret.get("secretName") or "") or {}),
                      secret.get("items"))
    if (downward := volume.get("downwardAPI")) is not None:
        out = {}
        for item in downward.get("items") or []:
            ref = item.get("fieldRef") or {}
            value = field_value(pod, ref.get("fieldPath") or "", pod_ip)
            if item.get("path") and value is not None:
                out[item["path"]] = value.encode()
        return out
    if (projected := volume.get("projected")) is not None:
        out = {}
        for source in projected.get("sources") or []:
            sat = source.get("serviceAccountToken")
            if isinstance(sat, dict) and sat.get("path") and tokens:
                token = tokens.get(token_key(sat))
                if token is not None:  # the kubelet's TokenRequest (token_manager.py)
                    out[sat["path"]] = token
            for kind in ("configMap", "secret", "downwardAPI"):
                if kind in source:
                    inner = dict(source[kind])
                    if kind == "secret":
                        inner["secretName"] = inner.get("name")
                    out.update(volume_contents(pod, {kind: inner}, configmaps, secrets,
                                               pod_ip) or {})
        return out
    return None


def mounted_files(pod: Obj, container: Obj, configmaps: Objects, secrets: Objects,
                  pod_ip: str = "", env: Mapping[str, str] | None = None,
                  tokens: Tokens | None = None) -> tuple[dict[str, bytes], set[str]]:
    """(absolute path -> bytes, mount directories) for the container's volumeMounts;
    `subPath` (or `subPathExpr` expanded from `env`) mounts one key as a file at mountPath."""
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name"))
        path = (mount.get("mountPath") or "").rstrip("/") or "/"
        if volume is None or not path.startswith("/"):
            continue
        contents = volume_contents(pod, volume, configmaps, secrets, pod_ip, tokens) or {}
        try:
            sub = subpath(mount, env or {}).strip("/")
        except ValueError:
            continue  # the container cannot start with it (config_error)
        if sub:
            if sub in contents:
                files[path] = contents[sub]
            else:
                dirs.add(path)
                prefix = sub + "/"
                files.update({f"{path}/{k[len(prefix):]}": v for k, v in contents.items()
                              if k.startswith(prefix)})
            continue
        dirs.add(path)
        files.update({f"{path.rstrip('/')}/{key}": value for key, value in contents.items()})
    return files, dirs


def build(pod: Obj, container: Obj, *, configmaps: Objects, secrets: Objects,
          services: list[Obj], pod_ip: str, host_ip: str = "",
          allocatable: Mapping[str, str] | None = None, tty: bool = False,
          written: dict[str, bytes] | None = None, tokens: Tokens | None = None) -> Sandbox:
    """The Sandbox for one exec: env, /etc files, the volumes, and what earlier execs wrote
    (`written`: the container's writable layer, shared between execs)."""
    name = (pod.get("metadata") or {}).get("name", "")
    namespace = (pod.get("metadata") or {}).get("namespace", "default")
    env = container_env(pod, container, configmaps=configmaps, secrets=secrets,
                        services=services, pod_ip=pod_ip, host_ip=host_ip,
                        allocatable=allocatable, tty=tty)
    files, dirs = mounted_files(pod, container, configmaps, secrets, pod_ip, env, tokens)
    base = {
        "/etc/hostname": f"{name}\n".encode(),
        "/etc/hosts": (f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                       f"{pod_ip}\t{name}\n").encode(),
        "/etc/resolv.conf": (f"search {namespace}.svc.cluster.local svc.cluster.local "
                             f"cluster.local\nnameserver 10.0.0.10\noptions ndots:5\n").encode(),
    }
    layer = written if written is not None else {}
    return Sandbox(name, env, {**base, **layer, **files}, dirs, layer=layer)
