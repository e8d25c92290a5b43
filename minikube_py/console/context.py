"""What the console's views read: one `ConsoleContext` per console listener.

Kubernetes piece: none upstream — kube-ui was a separate pod reading the API server over HTTP.
Here the console lives in the all-in-one process, so its context carries what that process
already has: the Store (the storage contract: range, history, current revision, compaction),
the trace ring, a factory of in-process API clients (the same handler pipeline as HTTP, no
socket), and the RunningCluster's components for the actions (stop a node, pause a component).
Holding these in one dataclass lets tests build a console over any API server without `start`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..pausing import REGISTRY, PauseRegistry
from ..trace import TRACE
from ..trace.ring import TraceRing

if TYPE_CHECKING:
    from ..apiserver.authz.guard import Guard
    from ..cli.start import RunningCluster
    from ..client import Client
    from ..storage import Store
    from .feeds import Feeds
    from .rates import RequestRates


@dataclass
class ConsoleContext:
    """Everything a view or an action may use. `client(user_agent)` makes an in-process
    client (the API server's trusted loopback: the console's own requests are not the
    browser user's — the user was authorized as cluster-admin at the console's door).
    `guard`: the secure port's authenticator and authorizer, set when the console listens on
    a non-loopback address (auth.py); None serves everyone who reaches the listener."""

    store: Store
    client: Callable[[str], Client]
    cluster: RunningCluster | None = None
    ring: TraceRing = TRACE
    guard: Guard | None = None
    #: the listener's address is not loopback: every request must prove cluster-admin
    require_auth: bool = False
    #: the shared watches (feeds.py), made at first use and stopped with the app
    _feeds: Feeds | None = field(default=None, repr=False)
    _rates: RequestRates | None = field(default=None, repr=False)

    def component(self, name: str) -> Any:
        """The running object (Scheduler, ControllerManager, KubeletPool) of a component of
        the cluster, or None when the console serves without one or it is disabled."""
        if self.cluster is None:
            return None
        return next((c.handle for c in self.cluster.components if c.name == name), None)

    @property
    def pauses(self) -> PauseRegistry:
        """The pause gates of the cluster's scheduler and controllers (minikube_py.pausing):
        the cluster's own registry, else the process's (a console built without a cluster)."""
        if self.cluster is not None and self.cluster.pauses is not None:
            return self.cluster.pauses
        return REGISTRY

    @property
    def feeds(self) -> Feeds:
        if self._feeds is None:
            from .feeds import Feeds

            self._feeds = Feeds(self.client("minikube-py-console"), self.component("informers"))
        return self._feeds

    @property
    def rates(self) -> RequestRates:
        if self._rates is None:
            from .rates import RequestRates

            self._rates = RequestRates(self.ring)
        return self._rates

    async def close(self) -> None:
        """Stop the shared watches and stop keeping the trace ring on."""
        if self._rates is not None:
            self._rates.close()
        if self._feeds is not None:
            await self._feeds.close()
