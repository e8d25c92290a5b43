"""The health endpoints /healthz, /livez and /readyz, with their named checks.

Kubernetes piece: k8s.io/apiserver/pkg/server/healthz (InstallPathHandler, handleRootHealth,
adaptCheckToHandler). Each endpoint runs an ordered list of named checks. The root path answers
`ok`, or with `?verbose` one `[+]name ok` line per check and `<endpoint> check passed`; any failed
check makes it a 500 listing every check (`[-]name failed: reason withheld`) and
`<endpoint> check failed`. `?exclude=name` skips a check (`[+]name excluded: ok`), and an
exclusion that names no check adds upstream's `warn:` line. Each check also has its own path,
`/healthz/etcd`, answering `ok` or `internal server error: <why>`. Upstream registers exact paths
only, so `/healthz/` is a 404 there and here.

The rendering is pure (`render`); the server supplies the checks (server.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

#: a check: None when healthy, else why not (the text goes to the log and the check's own path)
Check = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True)
class Endpoint:
    """One health endpoint: its name (`healthz`) and its checks, in the order they print."""

    name: str
    checks: Sequence[tuple[str, Check]]


@dataclass(frozen=True)
class Answer:
    status: int
    text: str


async def run_root(endpoint: Endpoint, verbose: bool, excluded: Sequence[str]) -> Answer:
    """The root path's answer (handleRootHealth)."""
    pending = list(dict.fromkeys(excluded))
    results: list[tuple[str, str | None, bool]] = []
    for name, check in endpoint.checks:
        if name in pending:
            pending.remove(name)
            results.append((name, None, True))
        else:
            results.append((name, await check(), False))
    return render(endpoint.name, results, pending, verbose)


def render(endpoint: str, results: Sequence[tuple[str, str | None, bool]],
           unknown_exclusions: Sequence[str], verbose: bool) -> Answer:
    """Upstream's text for check results `(name, failure or None, excluded)`."""
    lines = []
    failed = False
    for name, failure, excluded in results:
        if excluded:
            lines.append(f"[+]{name} excluded: ok\n")
        elif failure is not None:
            failed = True
            lines.append(f"[-]{name} failed: reason withheld\n")
        else:
            lines.append(f"[+]{name} ok\n")
    if unknown_exclusions:
        quoted = ",".join(f'"{name}"' for name in sorted(unknown_exclusions))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:  # http.Error appends a newline
        return Answer(500, "".join(lines) + f"{endpoint} check failed\n")
    if not verbose:
        return Answer(200, "ok")
    return Answer(200, "".join(lines) + f"{endpoint} check passed\n")


async def run_one(check: Check) -> Answer:
    """A single check's own path (adaptCheckToHandler)."""
    failure = await check()
    if failure is None:
        return Answer(200, "ok")
    return Answer(500, f"internal server error: {failure}\n")
