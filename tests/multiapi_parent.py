"""Child process for the multi-API-server lifecycle tests: `minikube-py start --apiservers N`
(`serve`, the command's own code) on ports the OS picks, in a process a test can kill.

Run as `python -m tests.multiapi_parent TMPDIR N`. It prints `start`'s summary (with the
`apiservers` line naming the children's pids) and exits with `start`'s exit code: 1, with the
reason on stderr, when an API server process died.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from minikube_py.cli import runtime
from minikube_py.cli.main import build_parser
from minikube_py.cli.start import serve
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import CommandError


def main() -> int:
    tmp, count = Path(sys.argv[1]), sys.argv[2]
    args = ["start", "--data-dir", str(tmp / "data"), "--cert-dir", str(tmp / "certs"),
            "--fsync", "never", "--nodes", "0", "--secure-port", "0", "--no-console",
            "--scheduler-port", "0", "--controller-manager-port", "0", "--kubelet-port", "0",
            "--kubeconfig-out", "", "--apiservers", count]
    options = dataclasses.replace(StartOptions.from_args(build_parser().parse_args(args)),
                                  ephemeral_ports=True)
    try:
        return runtime.run(serve(options))
    except CommandError as exc:
        print(f"minikube-py start: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
