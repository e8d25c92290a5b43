"""DeleteOptions as every delete path checks them: the DELETE verb's body or query, and the
`deleteOptions` an Eviction carries.

Kubernetes piece: k8s.io/apimachinery's ValidateDeleteOptions and ValidateDryRun, and
rest.BeforeDelete's "a negative grace period means 1 second". A module of its own so the
resource handlers and the eviction subresource (which must not import the handlers: they
import the subresources) apply one set of rules.
"""

from __future__ import annotations

from typing import Any

from ..api import errors


def dry_run_values(values: list[str], options_kind: str) -> bool:
    """Upstream's ValidateDryRun: `All` is the only value; anything else is a 422 on the
    request's options kind (`CreateOptions.meta.k8s.io "" is invalid: dryRun: ...`)."""
    if any(value != "All" for value in values):
        raise errors.invalid_object(options_kind, "", [errors.not_supported(
            "dryRun", errors.go_string_slice(values), ["All"])], group="meta.k8s.io")
    return bool(values)


def body_dry_run(options: dict[str, Any]) -> list[str]:
    """A decoded DeleteOptions' `dryRun`: a list of strings, else 400."""
    dry_run = options.get("dryRun") or []
    if not isinstance(dry_run, list) or not all(isinstance(v, str) for v in dry_run):
        raise errors.bad_request("dryRun must be a list of strings")
    return dry_run


def check_delete_options(options: dict[str, Any],
                         dry_run: list[str]) -> tuple[dict[str, Any], bool]:
    """ValidateDeleteOptions on decoded options (propagation, the dryRun — from the body or
    the query, the caller decides —, grace period, preconditions), in that order; returns
    them with a negative grace period made 1 s, and whether this is a dry run."""
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        raise errors.invalid_object("DeleteOptions", "", [errors.invalid(
            "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set")],
            group="meta.k8s.io")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid_object("DeleteOptions", "", [errors.not_supported(
            "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])],
            group="meta.k8s.io")
    is_dry_run = dry_run_values(dry_run, "DeleteOptions")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise errors.bad_request("gracePeriodSeconds must be an integer")
    preconditions = options.get("preconditions")
    if preconditions is not None and not (
            isinstance(preconditions, dict)
            and all(isinstance(preconditions.get(k), (str, type(None)))
                    for k in ("uid", "resourceVersion"))):
        raise errors.bad_request("preconditions must be an object")
    if grace is not None and grace < 0:
        options = dict(options, gracePeriodSeconds=1)  # upstream BeforeDelete: 1 s
    return options, is_dry_run
