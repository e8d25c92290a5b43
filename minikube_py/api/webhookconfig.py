"""MutatingWebhookConfiguration and ValidatingWebhookConfiguration: defaults and validation.

Kubernetes pieces: pkg/apis/admissionregistration/v1/defaults.go (SetDefaults_ValidatingWebhook,
SetDefaults_MutatingWebhook, SetDefaults_Rule, SetDefaults_ServiceReference) and
pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingWebhookConfiguration,
ValidateMutatingWebhookConfiguration: names, the sideEffects/timeout/admissionReviewVersions
checks; rules and matchConditions are checked by the validators admission policies share,
api/admissionpolicy.py) plus k8s.io/apiserver's util/webhook.ValidateWebhookClientConfig. Pure functions of decoded JSON that never raise: the
registry (registry/webhookconfigurations.py) calls them before every write and answers a 422.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from minikube_py.api import naming
from minikube_py.api.admissionpolicy import (
    FAILURE_POLICIES,
    MATCH_POLICIES,
    validate_match_conditions,
    validate_rule,
)
from minikube_py.api.errors import (
    FieldError,
    duplicate,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import validate_label_selector

Obj = dict[str, Any]
#: a matchCondition expression -> why it does not compile, or ""
CompileCheck = Callable[[str], str]

REINVOCATION_POLICIES = ("IfNeeded", "Never")
SIDE_EFFECTS_V1 = ("None", "NoneOnDryRun")
REVIEW_VERSIONS = ("v1", "v1beta1")
#: what a matchCondition may refer to (upstream also offers `authorizer`; we do not)
MATCH_CONDITION_VARIABLES = frozenset({"object", "oldObject", "request"})
DEFAULT_TIMEOUT = 10


# -- defaults --------------------------------------------------------------------------------
def default_configuration(config: Obj, mutating: bool) -> None:
    """SetDefaults_{Validating,Mutating}Webhook on every webhook, in place."""
    for hook in config.get("webhooks") or ():
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        if hook.get("namespaceSelector") is None:
            hook["namespaceSelector"] = {}
        if hook.get("objectSelector") is None:
            hook["objectSelector"] = {}
        hook.setdefault("timeoutSeconds", DEFAULT_TIMEOUT)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or ():
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"
        service = (hook.get("clientConfig") or {}).get("service") \
            if isinstance(hook.get("clientConfig"), dict) else None
        if isinstance(service, dict) and service.get("port") is None:
            service["port"] = 443


def validate_url(url: str, path: str = "url") -> list[FieldError]:
    """Upstream ValidateWebhookURL: https, a host, no user info, fragment or query."""
    parts = urlsplit(url)
    errs: list[FieldError] = []
    if parts.scheme != "https":
        errs.append(invalid(path, url, "'https' is the only allowed URL scheme"))
    if not parts.hostname:
        errs.append(invalid(path, url, "host must be specified"))
    if parts.username or parts.password:
        errs.append(invalid(path, url, "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, url, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, url, "query parameters are not permitted in the URL"))
    return errs


# -- validation ------------------------------------------------------------------------------
def validate_configuration(config: Obj, mutating: bool,
                           compile_check: CompileCheck | None = None) -> list[FieldError]:
    """Every webhook's rules, client config and policies; names unique in the configuration."""
    errs: list[FieldError] = []
    hooks = config.get("webhooks")
    if hooks is None:
        return errs
    if not isinstance(hooks, list):
        return [invalid("webhooks", hooks, "must be a list")]
    seen: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            errs.append(invalid(path, hook, "must be an object"))
            continue
        name = hook.get("name")
        if isinstance(name, str) and name in seen:
            errs.append(duplicate(f"{path}.name", name))
        elif isinstance(name, str):
            seen.add(name)
        errs += validate_webhook(hook, path, mutating, compile_check)
    return errs


def validate_webhook(hook: Obj, path: str, mutating: bool,
                     compile_check: CompileCheck | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    errs += _fully_qualified_name(hook.get("name"), f"{path}.name")
    for i, rule in enumerate(_list(hook.get("rules"), f"{path}.rules", errs)):
        validate_rule(rule, f"{path}.rules[{i}]", errs, allow_names=False)
    _enum(hook, "failurePolicy", FAILURE_POLICIES, path, errs)
    _enum(hook, "matchPolicy", MATCH_POLICIES, path, errs)
    if mutating:
        _enum(hook, "reinvocationPolicy", REINVOCATION_POLICIES, path, errs)
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(required(f"{path}.sideEffects",
                             f"must specify one of {', '.join(SIDE_EFFECTS_V1)}"))
    elif side_effects not in SIDE_EFFECTS_V1:
        errs.append(not_supported(f"{path}.sideEffects", side_effects, SIDE_EFFECTS_V1))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool)
                                or not 1 <= timeout <= 30):
        errs.append(invalid(f"{path}.timeoutSeconds", timeout,
                            "the timeout value must be between 1 and 30 seconds"))
    errs += _review_versions(hook.get("admissionReviewVersions"),
                             f"{path}.admissionReviewVersions")
    for field in ("namespaceSelector", "objectSelector"):
        selector = hook.get(field)
        if isinstance(selector, dict):
            validate_label_selector(selector, f"{path}.{field}", errs)
        elif selector is not None:
            errs.append(invalid(f"{path}.{field}", selector, "must be a label selector"))
    errs += _client_config(hook.get("clientConfig"), f"{path}.clientConfig")
    errs += _match_conditions(hook, path, compile_check)
    return errs


def _client_config(config: Any, path: str) -> list[FieldError]:
    """util/webhook ValidateWebhookClientConfig: exactly one of url or service."""
    if not isinstance(config, dict):
        return [required(path, "exactly one of url or service is required")]
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_url(str(url), f"{path}.url")
    return _service(service, f"{path}.service")


def _service(service: Any, path: str) -> list[FieldError]:
    if not isinstance(service, dict):
        return [invalid(path, service, "must be an object")]
    errs: list[FieldError] = []
    for field in ("name", "namespace"):
        if not service.get(field):
            errs.append(required(f"{path}.{field}", "service " + field + " is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(invalid(f"{path}.port", port,
                            "port is not valid: must be between 1 and 65535, inclusive"))
    webhook_path = service.get("path")
    if webhook_path is not None:
        if not isinstance(webhook_path, str) or not webhook_path.startswith("/"):
            errs.append(invalid(f"{path}.path", webhook_path, "must start with a '/'"))
        elif webhook_path != "/":
            for i, step in enumerate(webhook_path[1:].split("/")):
                if step == "":
                    errs.append(invalid(f"{path}.path", webhook_path,
                                        f"segment[{i}] may not be empty"))
    return errs


def _match_conditions(hook: Obj, path: str,
                      compile_check: CompileCheck | None) -> list[FieldError]:
    """upstream validateMatchConditions (shared with admission policies: at most 64, names
    qualified and unique, expressions present), then every expression compiles (upstream
    compiles them on validation: a typo is a 422 at write time, not a failure on every
    request). The CEL compiler is above this layer: the registry hands it in."""
    errs: list[FieldError] = []
    validate_match_conditions(hook, path, errs)
    if errs or compile_check is None:
        return errs
    for i, cond in enumerate(hook.get("matchConditions") or ()):
        message = compile_check(cond["expression"])
        if message:
            errs.append(invalid(f"{path}.matchConditions[{i}].expression", cond["expression"],
                                message))
    return errs


def _fully_qualified_name(name: Any, path: str) -> list[FieldError]:
    """utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three segments."""
    if not name:
        return [required(path, "")]
    if not isinstance(name, str):
        return [invalid(path, name, "must be a string")]
    if name.endswith("."):
        return [invalid(path, name, "must not contain a trailing period")]
    errs = [invalid(path, name, msg) for msg in naming.is_dns1123_subdomain(name)]
    if errs:
        return errs
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated "
                                    "by dots")]
    return []


def _review_versions(versions: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    versions = _strings(versions, path, errs)
    if not versions:
        return errs + [required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if not version:
            errs.append(required(f"{path}[{i}]", ""))
        elif version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
        seen.add(version)
    if not any(v in REVIEW_VERSIONS for v in versions):
        errs.append(invalid(path, versions,
                            f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return errs


def _enum(hook: Obj, field: str, allowed: tuple[str, ...], path: str, errs: list) -> None:
    value = hook.get(field)
    if value is not None and value not in allowed:
        errs.append(not_supported(f"{path}.{field}", value, allowed))


def _list(value: Any, path: str, errs: list) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        errs.append(invalid(path, value, "must be a list"))
        return []
    return value


def _strings(value: Any, path: str, errs: list) -> list[str]:
    values = _list(value, path, errs)
    if not all(isinstance(v, str) for v in values):
        errs.append(invalid(path, values, "must be a list of strings"))
        return []
    return values
