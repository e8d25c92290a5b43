"""Kubeconfig files for the cluster, and `minikube-py kubeconfig`.

Kubernetes piece: what `kubectl config set-cluster/set-context` (and local-up-cluster.sh's
closing hint) produce: one cluster, one user, one context, current-context set. For the
secure port: the CA to trust and a bearer token; for the insecure port: no credentials.

It carries the admin token, so it is written as kubeadm writes admin.conf: 0600, and its
directory (when created here, e.g. ~/.minikube-py) 0700, whatever the umask. It is never
reused: each start writes it anew (temp file + rename), so an old file's mode does not matter.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
from pathlib import Path

import yaml

from ..fileperms import PRIVATE_FILE, make_private_dir

CLUSTER_NAME = "minikube-py"


def render(server: str, name: str = CLUSTER_NAME, *, ca_data: bytes | None = None,
           token: str | None = None) -> str:
    """A kubeconfig for `server`; for the secure port with the CA to trust and a token."""
    cluster: dict = {"server": server}
    if ca_data is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token} if token else {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name,
                                                  "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: Path, server: str, *, ca_data: bytes | None = None,
          token: str | None = None) -> None:
    """Atomically (temp file + rename), so kubectl never reads half a file."""
    make_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # 0600 already
    try:
        with os.fdopen(fd, "w") as f:
            f.write(render(server, ca_data=ca_data, token=token))
        os.chmod(tmp, PRIVATE_FILE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "kubeconfig", parents=parents, help="print (or write) a kubeconfig for a cluster",
        description="Print a kubeconfig that points kubectl at a minikube-py API server.")
    parser.add_argument("--server", default="http://127.0.0.1:8080",
                        help="the API server's URL (default http://127.0.0.1:8080)")
    parser.add_argument("--out", metavar="FILE", help="write it here instead of printing it")
    parser.set_defaults(run=run, command="kubeconfig")


def run(args: argparse.Namespace) -> int:
    if args.out:
        write(Path(args.out).expanduser(), args.server)
        print(f"wrote {args.out}; use it with: export KUBECONFIG={args.out}")
    else:
        sys.stdout.write(render(args.server))
    return 0
