"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding as served resources.

Kubernetes pieces: pkg/registry/admissionregistration/validatingadmissionpolicy (strategy.go:
cluster scope, `status` subresource, PrepareForCreate clears status, generation bumps on spec
changes; the `api-extensions` category) and .../validatingadmissionpolicybinding. Defaults and
validation are api/admissionpolicy.py's; here they are hooked into the generic registry, and a
policy's CEL is compiled once at write time so an expression that does not compile is a 422
(upstream's validation compiles every expression too). What a policy *does* is the admission
plugin's (apiserver/admission/policy/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api import admissionpolicy as ap
from ..api import errors
from ..api.validation import CLUSTER_SCOPED
from .strategy import Obj, Strategy, SubresourceSpec

GROUP = "admissionregistration.k8s.io"
_STATUS = SubresourceSpec("status", ("get", "patch", "update"))
_CATEGORIES = ("api-extensions",)

#: CEL compile check of a defaulted policy spec -> field errors; installed by the admission
#: plugin package (the registry layer does not import the API server's CEL wiring)
PolicyCompiler = Callable[[Obj], list[errors.FieldError]]
_compile_check: list[PolicyCompiler] = []


def set_compile_check(check: PolicyCompiler) -> None:
    """Install the CEL compile check used on every policy write (idempotent)."""
    _compile_check[:] = [check]


def _check_policy(policy: Obj) -> None:
    """Validation of a policy the registry has defaulted already (api/defaults.py)."""
    name = (policy.get("metadata") or {}).get("name", "")
    errs = ap.validate_policy_spec(policy.get("spec"), name)
    if not errs and _compile_check:
        errs = _compile_check[0](policy)
    if errs:
        raise errors.invalid_object("ValidatingAdmissionPolicy", name, errs, GROUP)


def _check_binding(binding: Obj) -> None:
    errs = ap.validate_binding_spec(binding.get("spec"))
    if errs:
        raise errors.invalid_object("ValidatingAdmissionPolicyBinding",
                                    (binding.get("metadata") or {}).get("name", ""), errs, GROUP)


async def _policy_create(registry: Any, policy: Obj) -> None:
    """PrepareForCreate: the status is the server's (the plugin records observedGeneration)."""
    policy["status"] = {}
    _check_policy(policy)


async def _policy_update(registry: Any, new: Obj, old: Obj) -> None:
    _check_policy(new)


async def _binding_create(registry: Any, binding: Obj) -> None:
    _check_binding(binding)


async def _binding_update(registry: Any, new: Obj, old: Obj) -> None:
    _check_binding(new)


VALIDATING_ADMISSION_POLICIES = Strategy(
    group=GROUP, version="v1", resource="validatingadmissionpolicies",
    kind="ValidatingAdmissionPolicy", namespaced=False,
    key_root="validatingadmissionpolicies", categories=_CATEGORIES,
    subresources=(_STATUS,), has_status=True, validation=CLUSTER_SCOPED,
    prepare_create=_policy_create, prepare_update=_policy_update,
)

VALIDATING_ADMISSION_POLICY_BINDINGS = Strategy(
    group=GROUP, version="v1", resource="validatingadmissionpolicybindings",
    kind="ValidatingAdmissionPolicyBinding", namespaced=False,
    key_root="validatingadmissionpolicybindings", categories=_CATEGORIES,
    validation=CLUSTER_SCOPED, prepare_create=_binding_create, prepare_update=_binding_update,
)

#: what registry/resources.py serves
STRATEGIES: tuple[Strategy, ...] = (VALIDATING_ADMISSION_POLICIES,
                                    VALIDATING_ADMISSION_POLICY_BINDINGS)
