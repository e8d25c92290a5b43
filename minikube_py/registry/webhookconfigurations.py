"""MutatingWebhookConfiguration and ValidatingWebhookConfiguration as served resources.

Kubernetes pieces: pkg/registry/admissionregistration/mutatingwebhookconfiguration and
.../validatingwebhookconfiguration (strategy.go: cluster scope, no status, generation bumps on
webhooks changes; the `api-extensions` category). Defaults and validation are
api/webhookconfig.py's and run here on every write (a 422 names every bad field). What a
configuration *does* is the admission plugins' (apiserver/admission/webhook/).
"""

from __future__ import annotations

from typing import Any

from .. import cel
from ..api import errors
from ..api import webhookconfig as wc
from ..api.validation import CLUSTER_SCOPED
from .strategy import Obj, Strategy

GROUP = "admissionregistration.k8s.io"
_CATEGORIES = ("api-extensions",)


def compile_error(expression: str) -> str:
    """Why a matchCondition does not compile with its variables, or "" (upstream's
    compile-on-validate)."""
    try:
        cel.compile(expression, wc.MATCH_CONDITION_VARIABLES)
    except cel.CompileError as exc:
        return str(exc)
    return ""


def _checker(kind: str, mutating: bool):
    """prepare_create / prepare_update hooks: defaults, then validation, for one kind."""

    def check(config: Obj) -> None:
        wc.default_configuration(config, mutating)
        errs = wc.validate_configuration(config, mutating, compile_error)
        if errs:
            raise errors.invalid_object(kind, (config.get("metadata") or {}).get("name", ""),
                                        errs, GROUP)

    async def on_create(registry: Any, config: Obj) -> None:
        check(config)

    async def on_update(registry: Any, new: Obj, old: Obj) -> None:
        check(new)

    return on_create, on_update


_mutating_create, _mutating_update = _checker("MutatingWebhookConfiguration", True)
_validating_create, _validating_update = _checker("ValidatingWebhookConfiguration", False)

MUTATING_WEBHOOK_CONFIGURATIONS = Strategy(
    group=GROUP, version="v1", resource="mutatingwebhookconfigurations",
    kind="MutatingWebhookConfiguration", namespaced=False,
    key_root="mutatingwebhookconfigurations", categories=_CATEGORIES,
    spec_fields=("webhooks",), validation=CLUSTER_SCOPED,
    prepare_create=_mutating_create, prepare_update=_mutating_update,
)

VALIDATING_WEBHOOK_CONFIGURATIONS = Strategy(
    group=GROUP, version="v1", resource="validatingwebhookconfigurations",
    kind="ValidatingWebhookConfiguration", namespaced=False,
    key_root="validatingwebhookconfigurations", categories=_CATEGORIES,
    spec_fields=("webhooks",), validation=CLUSTER_SCOPED,
    prepare_create=_validating_create, prepare_update=_validating_update,
)

#: what registry/resources.py serves
STRATEGIES: tuple[Strategy, ...] = (MUTATING_WEBHOOK_CONFIGURATIONS,
                                    VALIDATING_WEBHOOK_CONFIGURATIONS)
