"""Priority: a pod's `priority` and `preemptionPolicy` come from its PriorityClass.

Kubernetes piece: plugin/pkg/admission/priority (on by default since 1.11). On pod create:
- no `priorityClassName`: the globalDefault class (the lowest-valued one if several) names the
  class and gives its value; with none, priority 0 and PreemptLowerPriority;
- a named class that does not exist: 403 `no PriorityClass with name X was found`;
- a `priority` or `preemptionPolicy` the client wrote that differs from the class's: 403 (the
  integer is the plugin's to fill in, not the client's).
On pod update the stored priority and preemptionPolicy are kept when the body omits them
(validation forbids changing them). On PriorityClass create/update: only one class may be
globalDefault.

Classes are read as upstream's plugin reads them, through the PriorityClass informer: the
global default comes from `DefaultClassIndex` (the globalDefault classes, kept as the
informer's events arrive: O(1) per pod instead of a list of every class), a named class from
the cache with a live get on a miss (a class created a moment ago). Whether a new class may be
globalDefault is decided on a live list: it is a rare write, and two defaults must never both
be admitted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api import errors
from ...api.priority import DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
from .chain import Attributes
from .denial import forbidden
from .informer import StoreInformer

Obj = dict[str, Any]
ListClasses = Callable[[], Awaitable[list[Obj]]]
GetClass = Callable[[str], Awaitable[Obj]]
GetPod = Callable[[str, str], Awaitable[Obj]]


def default_class(classes: list[Obj]) -> Obj | None:
    """upstream getDefaultPriorityClass: the globalDefault class with the lowest value."""
    defaults = [pc for pc in classes if pc.get("globalDefault") is True]
    return min(defaults, key=lambda pc: pc.get("value") or 0) if defaults else None


class DefaultClassIndex:
    """The globalDefault PriorityClasses, kept from the PriorityClass informer's key events."""

    def __init__(self, informer: StoreInformer) -> None:
        self._informer = informer
        self._defaults: dict[str, Obj] = {}
        self._best: Obj | None = None
        informer.key_listeners.append(self.on_change)

    @property
    def synced(self) -> bool:
        return self._informer.synced

    def on_change(self, key: str, obj: Obj | None) -> None:
        """StoreInformer key listener."""
        if obj is not None and obj.get("globalDefault") is True:
            self._defaults[key] = obj
        elif self._defaults.pop(key, None) is None:
            return
        self._best = default_class(list(self._defaults.values()))

    def best(self) -> Obj | None:
        """upstream getDefaultPriorityClass over the cache."""
        return self._best


def resolution_error(spec: Obj, priority: int, policy: str | None) -> str | None:
    """The Forbidden reason when the client's own priority fields disagree with the class."""
    given = spec.get("priority")
    if given is not None and given != priority:
        return (f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {priority} from the given "
                "PriorityClass name")
    given_policy = spec.get("preemptionPolicy")
    if policy is not None and given_policy is not None and given_policy != policy:
        return (f"the string value of PreemptionPolicy ({given_policy}) must not be provided "
                f"in pod spec; priority admission controller computed {policy} from the given "
                "PriorityClass name")
    return None


class Priority:
    name = "Priority"

    def __init__(self, list_classes: ListClasses, get_class: GetClass, get_pod: GetPod,
                 defaults: DefaultClassIndex | None = None) -> None:
        self._list = list_classes
        self._get = get_class
        self._get_pod = get_pod
        self._defaults = defaults

    async def _default(self) -> Obj | None:
        if self._defaults is not None and self._defaults.synced:
            return self._defaults.best()
        return default_class(await self._list())

    async def admit(self, attrs: Attributes) -> None:
        if attrs.subresource or not isinstance(attrs.obj, dict):
            return
        resource = (attrs.strategy.group, attrs.strategy.resource)
        if resource == ("", "pods"):
            if attrs.operation == "CREATE":
                await self._admit_new_pod(attrs)
            elif attrs.operation == "UPDATE":
                await self._keep_priority(attrs)
        elif (resource == ("scheduling.k8s.io", "priorityclasses")
              and attrs.operation in ("CREATE", "UPDATE")):
            await self._one_default(attrs)

    async def _admit_new_pod(self, attrs: Attributes) -> None:
        spec = attrs.obj.get("spec")
        if not isinstance(spec, dict):
            return
        name = spec.get("priorityClassName")
        if not name:
            pc = await self._default()
            if pc is not None:
                spec["priorityClassName"] = pc["metadata"]["name"]
                priority, policy = pc.get("value") or 0, pc.get("preemptionPolicy")
            else:
                priority, policy = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
        elif not isinstance(name, str):
            return  # validation reports the type
        else:
            try:
                pc = await self._get(name)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
                raise forbidden(attrs, f"no PriorityClass with name {name} was found") from None
            priority, policy = pc.get("value") or 0, pc.get("preemptionPolicy")
        reason = resolution_error(spec, priority, policy)
        if reason is not None:
            raise forbidden(attrs, reason)
        spec["priority"] = priority
        if policy is not None:
            spec["preemptionPolicy"] = policy

    async def _keep_priority(self, attrs: Attributes) -> None:
        spec = attrs.obj.get("spec")
        if not isinstance(spec, dict) or ("priority" in spec and "preemptionPolicy" in spec):
            return
        try:
            old = await self._get_pod(attrs.namespace, attrs.name)
        except errors.StatusError:
            return  # the update itself answers 404 (or creates, where allowed)
        old_spec = old.get("spec") or {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]

    async def _one_default(self, attrs: Attributes) -> None:
        if attrs.obj.get("globalDefault") is not True:
            return
        current = default_class(await self._list())
        if current is None:
            return
        current_name = current["metadata"]["name"]
        if attrs.operation == "CREATE" or current_name != attrs.name:
            raise forbidden(attrs, f"PriorityClass {current_name} is already marked as default. "
                                   "Only one default can exist")
