#!/usr/bin/env bash
# The Quickstart's one command: a virtualenv in .venv, minikube-py installed into it, then
# `minikube-py start "$@"` in the foreground (Ctrl-C stops it and keeps its data).
#
#   bash hack/quickstart.sh --ports auto     # every listener on a free port (a busy machine)
#
# A line per step, pip's own lines while it installs (no -q: an install takes up to a minute
# on a cold cache, and silence looks like a hang). The install is editable (-e), so a `git
# pull` needs no reinstall; it is redone only when pyproject.toml changes (a stamp in .venv).
# PYTHON=/path/to/python3.11 picks the interpreter (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."

began=$SECONDS
step() { printf '==> [%ss] %s\n' "$((SECONDS - began))" "$*"; }

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "minikube-py needs Python 3.11 or newer; $python is $("$python" --version 2>&1)." >&2
    echo "Point PYTHON at one: PYTHON=python3.11 bash hack/quickstart.sh" >&2
    exit 1
fi
step "1/3 $("$python" --version) ($(command -v "$python"))"

if [ -x .venv/bin/python ]; then
    step "2/3 virtualenv .venv: exists"
else
    step "2/3 virtualenv .venv: creating"
    "$python" -m venv .venv
fi

stamp=.venv/.minikube-py-installed
wanted=$(cksum < pyproject.toml)
if [ -x .venv/bin/minikube-py ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
    step "3/3 install: up to date (pyproject.toml unchanged since the last install)"
else
    step "3/3 install: minikube-py and its dependencies into .venv (pip)"
    .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
        -e '.[etcd,speed]'
    printf '%s\n' "$wanted" > "$stamp"
fi

step "starting: .venv/bin/minikube-py start $*"
exec .venv/bin/minikube-py start "$@"
