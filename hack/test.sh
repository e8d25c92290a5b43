#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
#
#   bash hack/test.sh [pytest args...]
#
# - Debian's etcd-server (the real etcd the etcd backend and its conformance run use), via
#   apt-get when missing (as root, or with sudo).
# - A fresh virtualenv in .venv-test (recreated every run, so nothing from a previous run is
#   reused), with the package and its [test] extra installed from this checkout.
# - Debian's kubectl 1.20 (package kubernetes-client, unpacked into the virtualenv, not
#   installed: hack/kubectl-1.20.sh), the oldest client the compatibility tests drive; its tests
#   skip with a reason when it cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
  echo "==> installing Debian's etcd-server"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq etcd-server etcd-client >/dev/null
fi

echo "==> creating a fresh virtualenv in .venv-test"
"$PYTHON" -m venv --clear .venv-test
.venv-test/bin/python -m pip install -q --upgrade pip >/dev/null
.venv-test/bin/python -m pip install -q -e '.[test]'
bash hack/kubectl-1.20.sh >/dev/null 2>&1 || echo "==> Debian's kubectl 1.20 unavailable: its tests will skip"

echo "==> running the test suite"
exec .venv-test/bin/python -m pytest -q -p no:cacheprovider "$@"
