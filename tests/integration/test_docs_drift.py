"""The docs cannot drift from the repository (issue 24): every relative link and every path of
the repository named in README.md and docs/*.md exists, and the start-up output shown in
docs/operations.md has the shape of a real `minikube-py start`'s (ports, times and home
directories aside)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from tests.e2e.cluster_process import CLI, REPO
from tests.integration.test_cli import Lines

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: a path in the repository: starts with one of its top-level directories
PATH = re.compile(r"(?<![\w/.$~-])((?:docs|configs|hack|tests|bench|minikube_py|cmd|examples)"
                  r"/[\w./-]*\w)")
#: Kubernetes' own paths named in docs/architecture.md's module map, not ours
UPSTREAM = {"cmd/kube-apiserver/app", "cmd/kube-controller-manager/app", "cmd/kubelet/app"}
#: written by the benchmarks when they run (git-ignored)
GENERATED = "bench/results/"


def test_every_relative_link_and_repository_path_in_the_docs_exists() -> None:
    missing = []
    for doc in DOCS:
        text = doc.read_text()
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (doc.parent / target.split("#")[0]).exists():
                missing.append(f"{doc.relative_to(REPO)}: link {target}")
        for m in PATH.finditer(text):
            path = m.group(1)
            # a pattern (`docs/images/console-*.png`, `console-<view>.png`): one file matches
            pattern = re.match(r"[\w./-]*[*<]", text[m.end():]) is not None
            if path in UPSTREAM or path.startswith(GENERATED) or (REPO / path).exists() or (
                    pattern and any(REPO.glob(path + "*"))):
                continue
            missing.append(f"{doc.relative_to(REPO)}: {path}")
    assert not missing, "named in the docs but not in the repository:\n" + "\n".join(missing)


def shape(lines: list[str]) -> list[str]:
    """Lines with what differs between two runs replaced: durations, ports, home directories
    (the number of controllers stays: a new controller is drift the page must show)."""
    out = []
    for line in lines:
        line = re.sub(r"\(\d+\.\d+ s\)", "(T s)", line)
        line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line)
        line = re.sub(r"\S*/\.minikube-py", "~/.minikube-py", line)
        out.append(line.rstrip())
    return out


def documented_summary() -> list[str]:
    text = (REPO / "docs" / "operations.md").read_text()
    found = re.search(r"<!-- start-summary:[^>]*-->\n```\n(.*?)```", text, re.DOTALL)
    assert found, "docs/operations.md: the start-summary block is gone"
    return found.group(1).rstrip("\n").split("\n")


def test_the_start_output_in_operations_md_is_a_real_starts(tmp_path: Path) -> None:
    home = tmp_path / ".minikube-py"
    proc = subprocess.Popen(
        [*CLI, "start", "--nodes", "3", "--ports", "auto", "--data-dir", str(home / "data"),
         "--cert-dir", str(home / "certs"), "--kubeconfig-out", str(home / "kubeconfig"),
         "--fsync", "never", "--log-level", "warning"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        out = Lines(proc.stdout)
        out.until("Inspect the store:", 60)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert shape(documented_summary()) == shape(out.seen)
