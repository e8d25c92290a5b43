"""The version rules of a CustomResourceDefinition: conversion settings and storedVersions.

Kubernetes pieces: apiextensions-apiserver's pkg/apis/apiextensions/validation
(validateCustomResourceConversion, validateConversionReviewVersions,
ValidateCustomResourceDefinitionStoredVersions, validatePreserveUnknownFields) and
pkg/registry/customresourcedefinition/strategy.go (PrepareForCreate/PrepareForUpdate append the
storage version to `status.storedVersions`). Field paths are upstream's: its validation runs on
the internal types, so a v1 `spec.conversion.webhook.clientConfig` is reported as
`spec.conversion.webhookClientConfig`, as kubectl users see it.

`status.storedVersions` is the list of versions objects may still be stored in: a version
there cannot leave `spec.versions` (the objects would become unreadable) until a storage
migration rewrote them and the list was trimmed through the status subresource.

Pure functions over the CRD's JSON; registry/crds.py calls them.
"""

from __future__ import annotations

from typing import Any

from ..api import errors
from ..api.naming import is_dns1035_label
from .conversion import REVIEW_VERSIONS, storage_version

Obj = dict[str, Any]
_STRATEGIES = ("None", "Webhook")


def default_conversion(spec: Obj) -> None:
    """SetDefaults_ServiceReference: a conversion webhook's service port is 443."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return
    webhook = conversion.get("webhook")
    config = webhook.get("clientConfig") if isinstance(webhook, dict) else None
    service = config.get("service") if isinstance(config, dict) else None
    if isinstance(service, dict):
        service.setdefault("port", 443)


def validate_spec(spec: Obj) -> list[errors.FieldError]:
    """The v1 rules of versions: preserveUnknownFields false, a schema for every version (each
    version validates, prunes and defaults with its own), the conversion."""
    errs: list[errors.FieldError] = []
    if spec.get("preserveUnknownFields") is True:
        errs.append(errors.invalid(
            "spec.preserveUnknownFields", True, "cannot set to true, set "
            "x-kubernetes-preserve-unknown-fields to true in openAPIV3Schema instead"))
    for i, version in enumerate(spec.get("versions") or ()):  # v1: one schema per version
        schema = version.get("schema") if isinstance(version, dict) else None
        if not isinstance(schema, dict) or schema.get("openAPIV3Schema") is None:
            errs.append(errors.required(f"spec.versions[{i}].schema.openAPIV3Schema",
                                        "schemas are required"))
    conversion = spec.get("conversion")
    if conversion is None:
        return errs
    if not isinstance(conversion, dict):
        return errs + [errors.invalid("spec.conversion", conversion, "must be an object")]
    return errs + _validate_conversion(conversion)


def _validate_conversion(conversion: Obj) -> list[errors.FieldError]:
    path = "spec.conversion"
    strategy = conversion.get("strategy")
    webhook = conversion.get("webhook") if isinstance(conversion.get("webhook"), dict) else {}
    config = webhook.get("clientConfig")
    review_versions = webhook.get("conversionReviewVersions")
    if not strategy:
        return [errors.required(f"{path}.strategy", "")]
    if strategy not in _STRATEGIES:
        return [errors.not_supported(f"{path}.strategy", strategy, _STRATEGIES)]
    errs: list[errors.FieldError] = []
    if strategy != "Webhook":
        if config is not None:
            errs.append(errors.forbidden(f"{path}.webhookClientConfig",
                                         "should not be set when strategy is not set to Webhook"))
        if review_versions:
            errs.append(errors.forbidden(f"{path}.conversionReviewVersions",
                                         "should not be set when strategy is not set to Webhook"))
        return errs
    if not isinstance(config, dict):
        errs.append(errors.required(f"{path}.webhookClientConfig",
                                    "required when strategy is set to Webhook"))
    elif bool(config.get("url")) == bool(config.get("service")):
        errs.append(errors.required(f"{path}.webhookClientConfig",
                                    "exactly one of url or service is required"))
    return errs + _validate_review_versions(review_versions, f"{path}.conversionReviewVersions")


def _validate_review_versions(versions: Any, path: str) -> list[errors.FieldError]:
    """validateConversionReviewVersions: required, unique, DNS-1035 labels, one we speak."""
    if not isinstance(versions, list) or not versions:
        return [errors.required(path, "")]
    errs: list[errors.FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(errors.invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        for problem in is_dns1035_label(str(version)):
            errs.append(errors.invalid(f"{path}[{i}]", version, problem))
    if not seen & set(REVIEW_VERSIONS):
        errs.append(errors.invalid(path, errors.go_string_slice(map(str, versions)),
                                   "must include at least one of v1, v1beta1"))
    return errs


def add_storage_version(crd: Obj) -> None:
    """Upstream's strategy on create and on every spec update: the storage version joins
    `status.storedVersions` (objects are about to be written in it)."""
    spec = crd.get("spec")
    storage = storage_version(spec) if isinstance(spec, dict) else ""
    if not storage:
        return
    status = crd.setdefault("status", {})
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = status["storedVersions"] = []
    if storage not in stored:
        stored.append(storage)


def validate_stored_versions(crd: Obj) -> list[errors.FieldError]:
    """ValidateCustomResourceDefinitionStoredVersions: not empty, holds the storage version,
    and every stored version is still in spec.versions."""
    path = "status.storedVersions"
    stored = (crd.get("status") or {}).get("storedVersions") or []
    if not stored:
        return [errors.invalid(path, errors.go_string_slice([]),
                               "must have at least one stored version")]
    errs: list[errors.FieldError] = []
    versions = [v for v in (crd.get("spec") or {}).get("versions") or () if isinstance(v, dict)]
    names = {v.get("name") for v in versions}
    for version in versions:
        if version.get("storage") is True and version.get("name") not in stored:
            errs.append(errors.invalid(path, version.get("name"),
                                       f"must have the storage version {version.get('name')}"))
    index = {name: i for i, name in enumerate(stored)}  # the last index of each, as upstream
    for name, i in index.items():
        if name not in names:
            errs.append(errors.invalid(f"{path}[{i}]", name, "must appear in spec.versions"))
    return errs


def needs_conversion(crd: Obj) -> bool:
    """Whether a CRD's objects can be in another version than the one asked for: several
    versions, or objects still stored in a version the spec renamed. A single-version CRD
    with nothing else stored keeps the registry's byte-splicing fast paths."""
    spec = crd.get("spec") or {}
    if len(spec.get("versions") or ()) > 1:
        return True
    stored = (crd.get("status") or {}).get("storedVersions") or ()
    return any(name != storage_version(spec) for name in stored)

