"""DefaultBinder: the default Bind plugin — POST pods/{name}/binding through the handle's client.

Kubernetes piece: pkg/scheduler/framework/plugins/defaultbinder/default_binder.go (1.31). The
API error (a 409 when the pod is already bound or being deleted, a 404 when it is gone) comes
back as an Error status carrying the API's message, as upstream's AsStatus(err); the binding
cycle then forgets the assumption and lets the failure handler decide whether to retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....api.errors import StatusError as APIStatusError
from ..interface import CycleState, Handle, Status

NAME = "DefaultBinder"
Obj = dict[str, Any]


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        md = pod.get("metadata") or {}
        try:
            await self.handle.client.bind(md.get("namespace", ""), md.get("name", ""), node_name)
        except APIStatusError as exc:
            return Status.error(exc.message)
        return None


def new(args: Mapping[str, Any], handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
