#!/usr/bin/env bash
# Put Debian's kubectl 1.20 (package kubernetes-client) at .venv-test/bin/kubectl.1.20 without
# installing the package (its /usr/bin/kubectl would clash with the gcloud dispatcher there).
#
#   bash hack/kubectl-1.20.sh [destination]
#
# Why 1.20: it is the newest kubectl that reads only /openapi/v2, in protobuf (server-side
# dry-run support, `diff`, `explain`), the client age the issue-15 compatibility tests cover;
# tests/e2e/test_openapi_v2_kubectl.py looks for it here (or at $KUBECTL_1_20) and skips without.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.venv-test/bin/kubectl.1.20}
[ -x "$DEST" ] && exit 0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
( cd "$WORK" && apt-get download -qq kubernetes-client 2>/dev/null ) || {
  apt-get update -qq && ( cd "$WORK" && apt-get download -qq kubernetes-client ); }
dpkg-deb -x "$WORK"/kubernetes-client_*.deb "$WORK/root"
install -D -m 0755 "$WORK/root/usr/bin/kubectl" "$DEST"
"$DEST" version --client --short 2>/dev/null || "$DEST" version --client
