"""A newcomer's first minutes (issue 24), timed as they would live them.

- first: from `git clone` to the real `kubectl get nodes` listing a Ready node, through the
  README's first command (`bash hack/quickstart.sh --ports auto`: a virtualenv, the install,
  `start`), with an empty HOME; pip (or uv, when `--uv` names one) keeps the machine's
  download cache, as a newcomer's second clone would. Target: <= 60 s including the install.
  Each step's second, from the script's `==> [Ns]` lines, shows where the time goes.
- busy: a cluster is running (the first one, on free ports); a second `minikube-py start
  --ports auto` beside it, with its own data dir — the seconds `start` reports until ready,
  and until kubectl lists its node. Target: ready <= 1 s. Baseline in the same run: the same
  start with no other cluster running (ratio busy / alone, since this machine is shared).

    python -m bench.newcomer [--runs 3] [--uv /path/to/uv]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

REPO = Path(__file__).resolve().parents[1]
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
READY = re.compile(r"^minikube-py is ready \((\d+\.\d+) s\)")
STEP = re.compile(r"^==> \[(\d+)s\] (.*)$")
INSTALL_TARGET_S, BUSY_TARGET_S = 60.0, 1.0


def machine_env(home: Path, uv: str | None) -> dict[str, str]:
    """A newcomer's environment: an empty HOME, the machine's package caches kept."""
    pip_cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"],
                               capture_output=True, text=True, check=False).stdout.strip()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "KUBECONFIG", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    path = env.get("PATH", "/usr/bin:/bin")
    # no uv unless asked for: the default newcomer has pip only
    path = ":".join(p for p in path.split(":") if not (Path(p) / "uv").exists())
    if uv:
        env["UV_CACHE_DIR"] = str(Path(os.environ.get("HOME", "/root")) / ".cache" / "uv")
        path = f"{Path(uv).parent}:{path}"
    env["PATH"] = path
    return env


def wait_for_nodes(kubeconfig: Path, env: dict[str, str], deadline: float) -> None:
    while time.perf_counter() < deadline:
        if kubeconfig.exists():
            done = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), "get", "nodes",
                                   "--no-headers"], capture_output=True, text=True, env=env,
                                  check=False, timeout=30)
            if done.returncode == 0 and " Ready " in done.stdout:
                return
        time.sleep(0.1)
    raise TimeoutError("kubectl get nodes never listed a Ready node")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def first_command(tmp: Path, uv: str | None) -> tuple[dict[str, Any], subprocess.Popen]:
    """Clone, run the README's first command, until kubectl lists the node. The cluster is
    left running (the busy machine of the next measurement)."""
    home = tmp / "home"
    home.mkdir()
    env = machine_env(home, uv)
    began = time.perf_counter()
    clone = tmp / "minikube_py"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, env=env)
    cloned = time.perf_counter() - began
    proc = subprocess.Popen(["bash", "hack/quickstart.sh", "--ports", "auto"], cwd=clone, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    steps: dict[str, float] = {}
    ready_s = None
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := STEP.match(line):
            steps[m[2].split(":")[0]] = float(m[1])
        if m := READY.match(line):
            ready_s = float(m[1])
            break
    else:
        raise RuntimeError(f"the quickstart exited {proc.wait()} before ready")
    wait_for_nodes(home / ".minikube-py" / "kubeconfig", env, time.perf_counter() + 60)
    total = time.perf_counter() - began
    return {"installer": "uv" if uv else "pip", "clone_s": round(cloned, 2),
            "steps_at_s": steps, "start_ready_s": ready_s,
            "clone_to_kubectl_get_nodes_s": round(total, 2)}, proc


def second_start(tmp: Path, clone: Path, env: dict[str, str], name: str) -> dict[str, Any]:
    """`start --ports auto` on its own data dir: its own ready seconds and to kubectl."""
    base = tmp / name
    argv = [str(clone / ".venv" / "bin" / "minikube-py"), "start", "--ports", "auto",
            "--data-dir", str(base / "data"), "--kubeconfig-out", str(base / "kubeconfig"),
            "--log-level", "warning"]
    began = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=clone, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        ready = next((float(m[1]) for line in proc.stdout if (m := READY.match(line))), None)
        if ready is None:
            raise RuntimeError(f"start exited {proc.wait()} before ready")
        wait_for_nodes(base / "kubeconfig", env, time.perf_counter() + 60)
        return {"ready_s": ready, "to_kubectl_s": round(time.perf_counter() - began, 2)}
    finally:
        stop(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="second starts per case")
    parser.add_argument("--uv", help="a uv binary: also time the Quickstart with uv")
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": common.machine_facts("n/a"), "first": [],
                              "targets": {"first_s": INSTALL_TARGET_S, "busy_s": BUSY_TARGET_S}}
    for uv in [None, *([args.uv] if args.uv else [])]:
        with tempfile.TemporaryDirectory(prefix="newcomer-") as tmp_name:
            tmp = Path(tmp_name)
            first, cluster = first_command(tmp, uv)
            result["first"].append(first)
            print(f"first command ({first['installer']}): clone -> kubectl get nodes "
                  f"{first['clone_to_kubectl_get_nodes_s']:.1f} s (target <= "
                  f"{INSTALL_TARGET_S:.0f} s); steps at {first['steps_at_s']}; start ready "
                  f"{first['start_ready_s']} s", flush=True)
            if uv is not None:
                stop(cluster)
                continue
            env = machine_env(tmp / "home", None)
            clone = tmp / "minikube_py"
            try:
                busy = [second_start(tmp, clone, env, f"busy-{i}") for i in range(args.runs)]
            finally:
                stop(cluster)
            alone = [second_start(tmp, clone, env, f"alone-{i}") for i in range(args.runs)]
    for name, runs in (("busy", busy), ("alone", alone)):
        result[name] = {"runs": runs,
                        "ready_s_median": common.median(r["ready_s"] for r in runs),
                        "to_kubectl_s_median": common.median(r["to_kubectl_s"] for r in runs)}
    result["busy_over_alone"] = round(result["busy"]["ready_s_median"]
                                      / result["alone"]["ready_s_median"], 2)
    result["machine"]["loadavg_end"] = common.loadavg()
    print(common.render_table(
        ["second start --ports auto", "ready s (median)", "to kubectl s (median)", "runs"],
        [[name, common.fmt(result[name]["ready_s_median"]),
          common.fmt(result[name]["to_kubectl_s_median"]),
          " ".join(f"{r['ready_s']:.2f}" for r in result[name]["runs"])]
         for name in ("busy", "alone")]))
    print(f"busy / alone: {result['busy_over_alone']}; target: ready <= {BUSY_TARGET_S} s; "
          f"load average {result['machine']['loadavg_start']} -> "
          f"{result['machine']['loadavg_end']}")
    print(f"wrote {common.write_json(REPO / 'bench' / 'results' / 'newcomer.json', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
