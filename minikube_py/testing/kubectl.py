"""Running the real kubectl against a test cluster.

Kubernetes piece: none upstream (envtest leaves it to the user); kind's and minikube's users
run kubectl with the cluster's kubeconfig — so do we: the binary on PATH (or $KUBECTL), with
KUBECONFIG pointing at the cluster's file and a private HOME so no user cache leaks in.
Without a kubectl, KubectlNotFound is raised; the pytest plugin turns it into a skip.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


class KubectlNotFound(RuntimeError):
    """No kubectl on PATH and no $KUBECTL: the test cannot run kubectl here."""


class KubectlError(RuntimeError):
    """kubectl exited non-zero (with check=True); carries its result."""

    def __init__(self, result: KubectlResult) -> None:
        super().__init__(f"kubectl {' '.join(result.args)} exited {result.returncode}: "
                         f"{result.stderr.strip()}")
        self.result = result


@dataclass(frozen=True)
class KubectlResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def find_kubectl() -> str:
    found = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not found:
        raise KubectlNotFound("no kubectl on PATH (set $KUBECTL to a kubectl binary)")
    return found


def environment(kubeconfig: Path, home: Path) -> dict[str, str]:
    return {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)}


def run(kubeconfig: Path, home: Path, args: tuple[str, ...], *, input: str | None = None,
        check: bool = True, timeout: float = 60.0) -> KubectlResult:
    """kubectl, blocking: for a cluster served from another thread (the sync Cluster)."""
    done = subprocess.run([find_kubectl(), *args], input=input, capture_output=True, text=True,
                          env=environment(kubeconfig, home), timeout=timeout, check=False)
    return _checked(KubectlResult(tuple(args), done.returncode, done.stdout, done.stderr), check)


async def run_async(kubeconfig: Path, home: Path, args: tuple[str, ...], *,
                    input: str | None = None, check: bool = True,
                    timeout: float = 60.0) -> KubectlResult:
    """kubectl as an asyncio subprocess: the cluster on this loop keeps serving meanwhile."""
    proc = await asyncio.create_subprocess_exec(
        find_kubectl(), *args, stdin=asyncio.subprocess.PIPE if input is not None else None,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=environment(kubeconfig, home))
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate(input.encode() if input is not None else None)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    result = KubectlResult(tuple(args), proc.returncode or 0, out.decode(), err.decode())
    return _checked(result, check)


def _checked(result: KubectlResult, check: bool) -> KubectlResult:
    if check and result.returncode != 0:
        raise KubectlError(result)
    return result
