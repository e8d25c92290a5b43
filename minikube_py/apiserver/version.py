"""What /version reports: Kubernetes' version.Info, filled in as a 1.31 build fills it.

Kubernetes piece: k8s.io/component-base/version (base.go's gitMajor, gitMinor, gitVersion,
gitCommit, gitTreeState, buildDate, stamped by hack/lib/version.sh at build time) and the
/version handler that serves it. kubectl prints every field (`kubectl version -o yaml`);
client-go's discovery parses them into version.Info, and tools compare gitVersion.

Where our values come from, once, at import (a few small file reads, no subprocess):
- gitCommit: the commit pip recorded when it installed this package from a VCS URL (PEP 610
  `direct_url.json`, tree state `clean`); else the checkout this package runs from (an editable
  install: `.git/HEAD` and its ref, tree state empty, as upstream leaves it unstamped, since
  telling clean from dirty needs `git status`); else UNKNOWN_COMMIT (40 zeros), tree state
  `archive`, what Kubernetes reports when built from a source archive.
- buildDate: that commit's committer time when its object is loose in the checkout, else when
  the distribution was installed, else upstream's unstamped default, 1970-01-01T00:00:00Z.
- goVersion, compiler, platform: the Python that runs us (`python3.11.2`, `cpython`) and Go's
  names for the OS and architecture (`linux/amd64`).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import platform
import zlib
from pathlib import Path

UNKNOWN_COMMIT = "0" * 40
UNSTAMPED_DATE = "1970-01-01T00:00:00Z"
MAJOR, MINOR = "1", "31"
GIT_VERSION = "v1.31.0-minikube-py"
_GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
            "i386": "386", "i686": "386", "armv7l": "arm", "ppc64le": "ppc64le",
            "s390x": "s390x"}
_DISTRIBUTION = "minikube_py"


def _rfc3339(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def _installed_commit() -> str | None:
    """PEP 610: pip's record of the VCS commit this distribution was installed from."""
    try:
        text = importlib.metadata.distribution(_DISTRIBUTION).read_text("direct_url.json")
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except (importlib.metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) and len(commit) == 40 else None


def _checkout_commit(root: Path) -> str | None:
    """HEAD of the git checkout at `root` (a branch's loose or packed ref, or a detached id)."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head if len(head) == 40 else None
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            commit, _, name = line.partition(" ")
            if name == ref:
                return commit
    except OSError:
        return None
    return None


def _commit_date(root: Path, commit: str) -> str | None:
    """The committer time of a loose commit object (`committer NAME <MAIL> SECONDS ZONE`)."""
    try:
        raw = zlib.decompress((root / ".git" / "objects" / commit[:2] / commit[2:]).read_bytes())
    except (OSError, zlib.error):
        return None
    for line in raw.split(b"\0", 1)[-1].splitlines():
        if line.startswith(b"committer "):
            try:
                return _rfc3339(int(line.rsplit(b" ", 2)[1]))
            except (ValueError, IndexError):
                return None
    return None


def _install_date() -> str | None:
    try:
        files = importlib.metadata.distribution(_DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name in ("METADATA", "PKG-INFO"):
            try:
                return _rfc3339(Path(str(file.locate())).stat().st_mtime)
            except OSError:
                return None
    return None


def build_info(package_root: Path) -> tuple[str, str, str]:
    """(gitCommit, gitTreeState, buildDate) for a package living at `package_root`."""
    commit = _installed_commit()
    if commit:
        return commit, "clean", _install_date() or UNSTAMPED_DATE
    checkout = package_root.parent
    commit = _checkout_commit(checkout)
    if commit:
        return commit, "", _commit_date(checkout, commit) or _install_date() or UNSTAMPED_DATE
    return UNKNOWN_COMMIT, "archive", _install_date() or UNSTAMPED_DATE


def version_info(package_root: Path) -> dict[str, str]:
    commit, tree_state, build_date = build_info(package_root)
    machine = platform.machine().lower()
    return {"major": MAJOR, "minor": MINOR, "gitVersion": GIT_VERSION, "gitCommit": commit,
            "gitTreeState": tree_state, "buildDate": build_date,
            "goVersion": f"python{platform.python_version()}",
            "compiler": platform.python_implementation().lower(),
            "platform": f"{platform.system().lower()}/{_GO_ARCH.get(machine, machine)}"}


#: the Kubernetes version /version reports. 31: kubectl prints no version-skew warning for
#: 1.30-1.32, and gcloud's kubectl dispatcher (/usr/bin/kubectl), which runs the client matching
#: the server, then picks 1.31 — the first kubectl whose exec *and* port-forward speak the
#: WebSocket protocols this server streams over (docs/kubelet.md)
KUBE_VERSION = version_info(Path(__file__).resolve().parent.parent)
