"""The live web console (issue 21 item 2): a teaching view of the running cluster.

Kubernetes piece: v1.0's kube-ui addon (and the later Dashboard), reduced to what a learner
needs to see the architecture work — the components and the requests between them, nodes and
their pods, events as they happen, one pod's journey and the store's keys — served by the
all-in-one process on its own listener (`minikube-py start --console-port`). It reads the
cluster through the in-process client (as any other client would) and the trace ring; it
never writes to the store directly.

Modules, one job each: `context` (what views read), `app` (the aiohttp application and its
listener), `static_files` (the shell, served from memory), `auth` (the door: credentials off
loopback, Host and JSON checks on it), `errors` and `views_json` (JSON Status bodies, JSON
answers, query parsing), `feeds` (the one shared watch per kind), `rates` (request and watch
rates from the trace ring), `shaping` (pure JSON for each view), `actions` (the buttons' pure
request shaping), `routes_*` (the handlers, listed in app.ROUTE_MODULES).
"""

from .context import ConsoleContext

__all__ = ["ConsoleContext"]
