"""Pod volumes, volume mounts and downward-API references.

Kubernetes pieces: pkg/apis/core/validation (ValidateVolumes, validateVolumeSource and the
per-source validators for the sources a single-node cluster can actually serve, validateKeyToPath,
ValidateLocalNonReservedPath, ValidateVolumeMounts, validateObjectFieldSelector,
validateContainerResourceFieldSelector). Network and cloud volume types are recognised (so
"exactly one source" holds for them too) but their fields are not checked further. Paths are
upstream's, including its quirks (downward-API items reported at the source path, subPath errors
at `volumeMounts.subPath` without an index).
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import quantity
from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    not_found,
    validate_dns_label,
    validate_qualified_name,
)
from minikube_py.api.validation.resources import parse_at
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_int,
    get_str,
    iter_dicts,
)

VOLUME_SOURCES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret",
    "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs",
    "quobyte", "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO",
    "csi", "ephemeral", "image",
)
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                   "FileOrCreate", "Socket")
FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"
VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name",
                      "metadata.namespace", "metadata.uid")
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
                   "status.podIPs")
_CONVERTIBLE_FIELD_PATHS = frozenset({
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
    "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
    "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs", "spec.host",
})
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory",
                        "requests.cpu", "requests.ephemeral-storage", "requests.memory")
_CPU_DIVISORS = frozenset({"1m", "1"})
_BYTE_DIVISORS = frozenset({"1", "1k", "1M", "1G", "1T", "1P", "1E",
                            "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"})
MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")


def validate_volumes(spec: dict[str, Any], path: str, errs: Errs) -> dict[str, dict[str, Any]]:
    """Validate spec.volumes; return the valid ones by name (mounts may only refer to those)."""
    volumes: dict[str, dict[str, Any]] = {}
    for _, volume, vol_path in iter_dicts(spec, "volumes", path, errs):
        local: Errs = []
        _validate_source(volume, vol_path, local)
        name_path = child(vol_path, "name")
        name = get_str(volume, "name", vol_path, local, required_=True)
        if name:
            validate_dns_label(name, name_path, local)
        if name in volumes:
            local.append(duplicate(name_path, name))
        if local:
            errs.extend(local)
        else:
            volumes[name] = volume
    return volumes


_SOURCE_ORDER = {source: i for i, source in enumerate(VOLUME_SOURCES)}


def _validate_source(volume: dict[str, Any], path: str, errs: Errs) -> None:
    """Exactly one source; the second and later ones (in upstream's order) are refused."""
    count = 0
    present = sorted((k for k in volume if k in _SOURCE_ORDER and volume[k] is not None),
                     key=_SOURCE_ORDER.__getitem__)
    for source in present:
        source_path = child(path, source)
        if count:
            errs.append(forbidden(source_path, "may not specify more than 1 volume type"))
            continue
        count += 1
        body = get_dict(volume, source, path, errs)
        check = _SOURCE_CHECKS.get(source)
        if body is not None and check is not None:
            check(body, source_path, errs)
    if not count:
        errs.append(required(path, "must specify a volume type"))


def _empty_dir(src: dict[str, Any], path: str, errs: Errs) -> None:
    raw = src.get("sizeLimit")
    if raw is not None:
        q = parse_at(raw, child(path, "sizeLimit"), errs)
        if q is not None and q.value < 0:
            errs.append(forbidden(child(path, "sizeLimit"),
                                  "SizeLimit field must be a valid resource quantity"))


def _host_path(src: dict[str, Any], path: str, errs: Errs) -> None:
    host_path = get_str(src, "path", path, errs, required_=True)
    if not host_path:
        return
    _no_backsteps(host_path, child(path, "path"), errs)
    kind = src.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(not_supported(child(path, "type"), kind, HOST_PATH_TYPES))


def _file_mode(src: dict[str, Any], name: str, path: str, errs: Errs) -> None:
    mode = get_int(src, name, path, errs)
    if mode is not None and not 0 <= mode <= 0o777:
        errs.append(invalid(child(path, name), mode, FILE_MODE_ERROR))


def _key_to_paths(src: dict[str, Any], path: str, errs: Errs, seen: set[str] | None = None,
                  owner: str = "", conflict_path: str = "") -> None:
    for _, item, item_path in iter_dicts(src, "items", path, errs):
        get_str(item, "key", item_path, errs, required_=True)
        item_file = get_str(item, "path", item_path, errs, required_=True)
        validate_local_non_reserved_path(item_file, child(item_path, "path"), errs)
        _file_mode(item, "mode", item_path, errs)
        if seen is not None and item_file:
            if item_file in seen:
                errs.append(invalid(conflict_path, owner, "conflicting duplicate paths"))
            seen.add(item_file)


def _secret(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "secretName", path, errs, required_=True)
    _file_mode(src, "defaultMode", path, errs)
    _key_to_paths(src, path, errs)


def _config_map(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "name", path, errs, required_=True)
    _file_mode(src, "defaultMode", path, errs)
    _key_to_paths(src, path, errs)


def _claim(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "claimName", path, errs, required_=True)


def _nfs(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "server", path, errs, required_=True)
    nfs_path = get_str(src, "path", path, errs, required_=True)
    if not nfs_path.startswith("/"):
        errs.append(invalid(child(path, "path"), nfs_path, "must be an absolute path"))


def _git_repo(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "repository", path, errs, required_=True)
    _local_descending(get_str(src, "directory", path, errs), child(path, "directory"), errs)


def _downward_api(src: dict[str, Any], path: str, errs: Errs) -> None:
    _file_mode(src, "defaultMode", path, errs)
    for _, item, item_path in iter_dicts(src, "items", path, errs):
        _downward_api_file(item, path, errs, item_path)


def _downward_api_file(item: dict[str, Any], path: str, errs: Errs, item_path: str) -> None:
    """Upstream reports these at the source's path, not the item's."""
    item_file = get_str(item, "path", item_path, errs)
    if not item_file:
        errs.append(required(child(path, "path")))
    validate_local_non_reserved_path(item_file, child(path, "path"), errs)
    field_ref = get_dict(item, "fieldRef", item_path, errs)
    resource_ref = get_dict(item, "resourceFieldRef", item_path, errs)
    if field_ref is not None:
        validate_object_field_selector(field_ref, VOLUME_FIELD_PATHS, child(path, "fieldRef"), errs)
        if resource_ref is not None:
            errs.append(invalid(path, "resource",
                                "fieldRef and resourceFieldRef can not be specified "
                                "simultaneously"))
    elif resource_ref is not None:
        validate_resource_field_selector(resource_ref, child(path, "resourceFieldRef"), errs,
                                         volume=True)
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    _file_mode(item, "mode", path, errs)


def _projected(src: dict[str, Any], path: str, errs: Errs) -> None:
    _file_mode(src, "defaultMode", path, errs)
    seen: set[str] = set()
    for _, source, src_path in iter_dicts(src, "sources", path, errs):
        count = 0
        for name in ("secret", "configMap"):
            body = get_dict(source, name, src_path, errs)
            if body is None:
                continue
            count += 1
            owner = get_str(body, "name", child(src_path, name), errs, required_=True)
            _key_to_paths(body, child(src_path, name), errs, seen, owner, path)
        downward = get_dict(source, "downwardAPI", src_path, errs)
        if downward is not None:
            count += 1
            for _, item, item_path in iter_dicts(downward, "items", child(src_path, "downwardAPI"),
                                                 errs):
                _downward_api_file(item, child(src_path, "downwardAPI"), errs, item_path)
                item_file = item.get("path")
                if isinstance(item_file, str) and item_file:
                    if item_file in seen:
                        errs.append(invalid(path, item_file, "conflicting duplicate paths"))
                    seen.add(item_file)
        token = get_dict(source, "serviceAccountToken", src_path, errs)
        if token is not None:
            count += 1
            _service_account_token(token, child(src_path, "serviceAccountToken"), path, errs)
        if source.get("clusterTrustBundle") is not None:
            count += 1
        if count > 1:
            errs.append(forbidden(src_path, "may not specify more than 1 volume type per source"))


def _service_account_token(token: dict[str, Any], path: str, projected_path: str,
                           errs: Errs) -> None:
    seconds = get_int(token, "expirationSeconds", path, errs) or 0
    if seconds < 600:
        errs.append(invalid(child(path, "expirationSeconds"), seconds,
                            "may not specify a duration less than 10 minutes"))
    if seconds > 1 << 32:
        errs.append(invalid(child(path, "expirationSeconds"), seconds,
                            "may not specify a duration larger than 2^32 seconds"))
    token_path = get_str(token, "path", path, errs)
    if not token_path:
        errs.append(required(child(projected_path, "path")))
    else:
        validate_local_non_reserved_path(token_path, child(projected_path, "path"), errs)


_SOURCE_CHECKS = {
    "emptyDir": _empty_dir, "hostPath": _host_path, "secret": _secret, "configMap": _config_map,
    "persistentVolumeClaim": _claim, "nfs": _nfs, "gitRepo": _git_repo,
    "downwardAPI": _downward_api, "projected": _projected,
}


def validate_source_body(source: str, body: dict[str, Any], path: str, errs: Errs) -> None:
    """The per-source checks of one volume source (`hostPath`, `nfs`, ...), for the sources a
    PersistentVolume shares with pod volumes (see persistentvolumes.py); others pass."""
    check = _SOURCE_CHECKS.get(source)
    if check is not None:
        check(body, path, errs)


# ---------------------------------------------------------------------------------------------
# Paths


def _no_backsteps(target: str, path: str, errs: Errs) -> None:
    if ".." in target.split("/"):
        errs.append(invalid(path, target, "must not contain '..'"))


def _local_descending(target: str, path: str, errs: Errs) -> None:
    if target.startswith("/"):
        errs.append(invalid(path, target, "must be a relative path"))
    _no_backsteps(target, path, errs)


def validate_local_non_reserved_path(target: str, path: str, errs: Errs) -> None:
    _local_descending(target, path, errs)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))


# ---------------------------------------------------------------------------------------------
# Downward API selectors (env valueFrom and downwardAPI volumes)


def _split_subscript(field_path: str) -> tuple[str, str] | None:
    """`metadata.labels['app']` -> (`metadata.labels`, `app`)
    (upstream fieldpath.SplitMaybeSubscriptedPath)."""
    if not field_path.endswith("']"):
        return None
    start = field_path.find("['")
    if start < 0:
        return None
    return field_path[:start], field_path[start + 2:-2]


def validate_object_field_selector(ref: dict[str, Any], allowed: tuple[str, ...], path: str,
                                   errs: Errs) -> None:
    api_version = get_str(ref, "apiVersion", path, errs)
    if not api_version:
        errs.append(required(child(path, "apiVersion")))
        return
    field_path = get_str(ref, "fieldPath", path, errs)
    if not field_path:
        errs.append(required(child(path, "fieldPath")))
        return
    subscripted = _split_subscript(field_path)
    problem = ""
    if api_version != "v1":
        problem = f"unsupported pod version: {api_version}"
    elif subscripted is not None:
        if subscripted[0] not in ("metadata.annotations", "metadata.labels"):
            problem = f"field label does not support subscript: {field_path}"
    elif field_path not in _CONVERTIBLE_FIELD_PATHS:
        problem = f"field label not supported: {field_path}"
    if problem:
        errs.append(invalid(child(path, "fieldPath"), field_path,
                            f"error converting fieldPath: {problem}"))
        return
    if subscripted is not None:
        base, subscript = subscripted
        validate_qualified_name(subscript.lower() if base == "metadata.annotations" else subscript,
                                path, errs)
        return
    internal = "spec.nodeName" if field_path == "spec.host" else field_path
    if internal not in allowed:
        errs.append(not_supported(child(path, "fieldPath"), internal, sorted(allowed)))


def validate_resource_field_selector(ref: dict[str, Any], path: str, errs: Errs, *,
                                     volume: bool) -> None:
    container = get_str(ref, "containerName", path, errs)
    resource = get_str(ref, "resource", path, errs)
    if volume and not container:
        errs.append(required(child(path, "containerName")))
    elif not resource:
        errs.append(required(child(path, "resource")))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(
            ("requests.hugepages-", "limits.hugepages-")):
        errs.append(not_supported(child(path, "resource"), resource, RESOURCE_FIELD_PATHS))
    raw = ref.get("divisor")
    if raw is None:
        return
    q = parse_at(raw, child(path, "divisor"), errs)
    if q is None or not q.value:
        return
    text = quantity.format_quantity(q.value, q.format)
    allowed = _CPU_DIVISORS if resource.endswith(".cpu") else _BYTE_DIVISORS
    if (resource.endswith((".cpu", ".memory", ".ephemeral-storage")) or ".hugepages-" in resource) \
            and text not in allowed:
        what = {"cpu": "the cpu resource", "memory": "the memory resource",
                "ephemeral-storage": "the local ephemeral storage resource"}.get(
            resource.split(".", 1)[1], "the hugepages resource")
        values = "1m and 1" if allowed is _CPU_DIVISORS else (
            "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei")
        errs.append(invalid(child(path, "divisor"), resource,
                            f"only divisor's values {values} are supported with {what}"))


# ---------------------------------------------------------------------------------------------
# Volume mounts


def validate_volume_mounts(container: dict[str, Any], volumes: dict[str, dict[str, Any]],
                           path: str, errs: Errs) -> None:
    mounts_path = child(path, "volumeMounts")
    mount_points: set[str] = set()
    privileged = (get_dict(container, "securityContext", path, []) or {}).get("privileged") is True
    for _, mount, mount_path in iter_dicts(container, "volumeMounts", path, errs):
        name = get_str(mount, "name", mount_path, errs, required_=True)
        if name not in volumes:
            errs.append(not_found(child(mount_path, "name"), name))
        target = get_str(mount, "mountPath", mount_path, errs, required_=True)
        if target in mount_points:
            errs.append(invalid(child(mount_path, "mountPath"), target, "must be unique"))
        mount_points.add(target)
        sub_path = get_str(mount, "subPath", mount_path, errs)
        if sub_path:
            _local_descending(sub_path, child(mounts_path, "subPath"), errs)
        sub_path_expr = get_str(mount, "subPathExpr", mount_path, errs)
        if sub_path_expr:
            if sub_path:
                errs.append(invalid(child(mount_path, "subPathExpr"), sub_path_expr,
                                    "subPathExpr and subPath are mutually exclusive"))
            _local_descending(sub_path_expr, child(mounts_path, "subPathExpr"), errs)
        propagation = mount.get("mountPropagation")
        if propagation is not None:
            prop_path = child(mounts_path, "mountPropagation")
            if propagation not in MOUNT_PROPAGATIONS:
                errs.append(not_supported(prop_path, propagation, MOUNT_PROPAGATIONS))
            elif propagation == "Bidirectional" and not privileged:
                errs.append(forbidden(prop_path, "Bidirectional mount propagation is available "
                                                 "only to privileged containers"))
