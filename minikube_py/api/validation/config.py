"""Configuration objects: Secrets, ConfigMaps, ServiceAccounts.

Kubernetes pieces: pkg/apis/core/validation (ValidateSecret, ValidateSecretUpdate,
ValidateConfigMap, ValidateConfigMapUpdate, ValidateServiceAccount) and, for `data` values,
the base64 decoding that upstream's JSON decoder applies to []byte fields (Go's StdEncoding:
padded, newlines ignored, errors as `illegal base64 data at input byte N`).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from minikube_py.api.errors import forbidden, invalid, required, too_long
from minikube_py.api.validation.common import (
    is_config_map_key,
    name_is_dns_subdomain,
    validate_immutable,
)
from minikube_py.api.validation.meta import (
    metadata,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    get_bool,
    get_dict,
    get_str,
    get_str_map,
    iter_dicts,
    key,
    type_error,
)

MAX_SIZE = 1024 * 1024
REDACTED = "<secret contents redacted>"
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
IMMUTABLE_SET = "field is immutable when `immutable` is set"


def base64_error(text: str) -> str | None:
    """Where Go's base64.StdEncoding would fail on `text`, in its words; None when it decodes.
    A transcription of upstream's decodeQuantum (newlines are skipped, padding is required)."""
    n = len(text)
    si = 0
    while True:
        j = 0
        while j < 4:
            while si < n and text[si] in "\r\n":
                si += 1
            if si == n:
                return None if j == 0 else _bad(si - j)
            ch = text[si]
            si += 1
            if ch in _B64_ALPHABET:
                j += 1
                continue
            if ch != "=" or j < 2:
                return _bad(si - 1)
            if j == 2:
                while si < n and text[si] in "\r\n":
                    si += 1
                if si == n:
                    return _bad(n)
                if text[si] != "=":
                    return _bad(si - 1)
                si += 1
            while si < n and text[si] in "\r\n":
                si += 1
            return _bad(si) if si < n else None


def _bad(position: int) -> str:
    return f"illegal base64 data at input byte {position}"


def decode_data(obj: Any, name: str, errs: Errs) -> dict[str, bytes]:
    """obj[name] as {key: decoded bytes}; values that are not base64 strings are reported."""
    values = get_dict(obj, name, "", errs) or {}
    decoded: dict[str, bytes] = {}
    for k, raw in values.items():
        if raw is None:
            decoded[k] = b""
            continue
        if not isinstance(raw, str):
            errs.append(type_error(key(name, k), raw, "a base64 string"))
            continue
        problem = base64_error(raw)
        if problem:
            errs.append(invalid(key(name, k), REDACTED, problem))
            continue
        try:
            decoded[k] = base64.b64decode(raw.replace("\r", "").replace("\n", ""))
        except (binascii.Error, ValueError) as err:
            errs.append(invalid(key(name, k), REDACTED, str(err)))
    return decoded


def _json_object_error(data: bytes) -> str | None:
    if not data:
        return "unexpected end of JSON input"
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        return f"invalid character in JSON: {err}"
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
        return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    return None


def validate_secret(secret: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(secret, True, name_is_dns_subdomain, errs)
    data = decode_data(secret, "data", errs)
    total = 0
    for k, value in data.items():
        for msg in is_config_map_key(k):
            errs.append(invalid(key("data", k), k, msg))
        total += len(value)
    for k in get_str_map(secret, "stringData", "", errs):
        for msg in is_config_map_key(k):
            errs.append(invalid(key("stringData", k), k, msg))
    if total > MAX_SIZE:
        errs.append(too_long("data", MAX_SIZE))
    get_bool(secret, "immutable", "", errs)
    _secret_type(secret, data, errs)


def _secret_type(secret: dict[str, Any], data: dict[str, bytes], errs: Errs) -> None:
    kind = get_str(secret, "type", "", errs)
    if kind == "kubernetes.io/service-account-token":
        annotations = get_str_map(metadata(secret, []), "annotations", "metadata", [])
        if not annotations.get("kubernetes.io/service-account.name"):
            errs.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        data_key = ".dockercfg" if kind.endswith("dockercfg") else ".dockerconfigjson"
        if data_key not in data:
            errs.append(required(key("data", data_key)))
            return
        problem = _json_object_error(data[data_key])
        if problem:
            errs.append(invalid(key("data", data_key), REDACTED, problem))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.append(required("data[username]"))
            errs.append(required("data[password]"))
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            errs.append(required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        for data_key in ("tls.crt", "tls.key"):
            if data_key not in data:
                errs.append(required(key("data", data_key)))


def _immutable_rules(new: dict[str, Any], old: dict[str, Any], fields: tuple[str, ...],
                     errs: Errs) -> None:
    """Once `immutable: true`, the flag and the payload are frozen."""
    if old.get("immutable") is not True:
        return
    if new.get("immutable") is not True:
        errs.append(forbidden("immutable", IMMUTABLE_SET))
    for name in fields:
        if (new.get(name) or {}) != (old.get(name) or {}):
            errs.append(forbidden(name, IMMUTABLE_SET))


def validate_secret_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_immutable(new.get("type"), old.get("type"), "type", errs)
    _immutable_rules(new, old, ("data",), errs)
    validate_secret(new, errs)


def validate_config_map(cm: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(cm, True, name_is_dns_subdomain, errs)
    data = get_str_map(cm, "data", "", errs)
    binary = decode_data(cm, "binaryData", errs)
    total = 0
    for k, value in data.items():
        for msg in is_config_map_key(k):
            errs.append(invalid(key("data", k), k, msg))
        if k in binary:
            errs.append(invalid(key("data", k), k, "duplicate of key present in binaryData"))
        total += len(value.encode())
    for k, blob in binary.items():
        for msg in is_config_map_key(k):
            errs.append(invalid(key("binaryData", k), k, msg))
        total += len(blob)
    if total > MAX_SIZE:
        errs.append(too_long("", MAX_SIZE))
    get_bool(cm, "immutable", "", errs)


def validate_config_map_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _immutable_rules(new, old, ("data", "binaryData"), errs)
    validate_config_map(new, errs)


def validate_service_account(sa: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(sa, True, name_is_dns_subdomain, errs)
    for name in ("secrets", "imagePullSecrets"):
        for _ in iter_dicts(sa, name, "", errs):
            pass
    get_bool(sa, "automountServiceAccountToken", "", errs)


def validate_service_account_update(new: dict[str, Any], old: dict[str, Any],
                                    errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_service_account(new, errs)
