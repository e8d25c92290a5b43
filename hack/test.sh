#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
#
#   bash hack/test.sh [pytest args...]
#
# - Debian's etcd-server (the real etcd the etcd backend and its conformance run use), via
#   apt-get when missing (as root, or with sudo).
# - A fresh virtualenv in .venv-test (recreated every run, so nothing from a previous run is
#   reused), with the package and its [test] extra installed from this checkout.
# - Debian's chromium (the console's browser tests drive it through Playwright), via apt-get.
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

# Debian's chromium for the console's browser tests (tests/browser/, Playwright drives it; its
# tests skip with a reason without it) - never `playwright install`, which downloads a browser
if [ ! -x /usr/bin/chromium ]; then
  echo "==> installing Debian's chromium (the console's browser tests)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null \
    || echo "==> chromium unavailable: the browser tests will skip"
fi

echo "==> creating a fresh virtualenv in .venv-test"
"$PYTHON" -m venv --clear .venv-test
.venv-test/bin/python -m pip install -q --upgrade pip >/dev/null
.venv-test/bin/python -m pip install -q -e '.[test]'
bash hack/kubectl-1.20.sh >/dev/null 2>&1 || echo "==> Debian's kubectl 1.20 unavailable: its tests will skip"

PYTEST=(.venv-test/bin/python -m pytest -q -p no:cacheprovider)
if [ "$#" -gt 0 ]; then  # a chosen test file or option: run just that, in one process
  exec "${PYTEST[@]}" "$@"
fi
# The whole suite in two parts (about 6 minutes on 2 cores instead of 20 in one process):
# most of it in 4 worker processes (pytest-xdist; a test module stays in one worker, so its
# module fixtures - servers, clusters - are made once), the tests are mostly waiting on real
# servers and kubectl subprocesses; then tests/robustness alone, because it measures the
# server's event-loop lag and time budgets, which other workers' load would distort.
echo "==> running the test suite (in parallel, then tests/browser and tests/robustness alone)"
"${PYTEST[@]}" -n 4 --dist loadfile --ignore=tests/robustness --ignore=tests/browser
# the console in a real browser: its live views are timed (a hop on the page within seconds),
# so they run in their own process, without other workers' clusters sharing it
echo "==> tests/browser (a real chromium: run alone)"
"${PYTEST[@]}" tests/browser
echo "==> tests/robustness (timing budgets: run alone)"
exec "${PYTEST[@]}" tests/robustness
