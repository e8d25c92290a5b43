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

# The installer: uv when it is on PATH (about 10 s), else pip (40-80 s, mostly resolving).
# pip runs from the interpreter's own install with --python when it can: a venv created
# without pip takes 0.1 s instead of ensurepip's 5-10 s.
if command -v uv >/dev/null 2>&1; then
    installer=uv
elif "$python" -m pip --version >/dev/null 2>&1; then
    installer=pip
else
    installer=venv-pip
fi

if [ -x .venv/bin/python ]; then
    step "2/3 virtualenv .venv: exists"
else
    step "2/3 virtualenv .venv: creating"
    case $installer in
        uv) uv venv --quiet --python "$python" .venv ;;
        pip) "$python" -m venv --without-pip .venv ;;
        *) "$python" -m venv .venv ;;
    esac
fi

stamp=.venv/.minikube-py-installed
wanted=$(cksum < pyproject.toml)
if [ -x .venv/bin/minikube-py ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
    step "3/3 install: up to date (pyproject.toml unchanged since the last install)"
else
    step "3/3 install: minikube-py and its dependencies into .venv ($installer; a line per package)"
    case $installer in
        uv) uv pip install --python .venv/bin/python -e '.[etcd,speed]' ;;
        pip) "$python" -m pip --python .venv/bin/python install --disable-pip-version-check \
                 --progress-bar off --no-compile -e '.[etcd,speed]' ;;
        *) .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
               --no-compile -e '.[etcd,speed]' ;;
    esac
    printf '%s\n' "$wanted" > "$stamp"
fi

step "starting: .venv/bin/minikube-py start $*"
exec .venv/bin/minikube-py start "$@"
