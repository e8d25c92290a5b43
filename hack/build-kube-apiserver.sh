#!/usr/bin/env bash
# Build the real kube-apiserver v1.20.2 from Debian bookworm's `kubernetes` source package, for
# tests/etcdserver/test_real_kube_apiserver.py (the real kube-apiserver on the embedded store
# through our etcd v3 server). Debian ships only kubectl from that source; the server builds
# from its vendored tree with Debian's Go (1.19) in GOPATH mode, as Kubernetes 1.20's own
# hack/lib/init.sh does (GO111MODULE=off). Needs root (apt), ~1.5 GB of disk, and ~20 minutes
# of both cores (measured: 2026-11-26, the binary 153 MB).
#
#   hack/build-kube-apiserver.sh [WORKDIR]      # default /tmp/k8s-build
#   KUBE_APISERVER=WORKDIR/kube-apiserver .venv-test/bin/python -m pytest \
#       tests/etcdserver/test_real_kube_apiserver.py
set -euo pipefail

work=${1:-/tmp/k8s-build}
mkdir -p "$work"
cd "$work"

if ! grep -rqs "^Types: deb-src" /etc/apt/sources.list.d/; then
  cat > /etc/apt/sources.list.d/debian-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq
fi
command -v go >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go
command -v rsync >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rsync
ls kubernetes_*.orig.tar.gz >/dev/null 2>&1 || apt-get source -qq --download-only kubernetes
[ -d kubernetes-1.20.2 ] || tar xzf kubernetes_*.orig.tar.gz

# the OpenAPI definitions are generated, not in the source (Kubernetes' own `make` target;
# its build script copies the generator with rsync)
[ -f kubernetes-1.20.2/pkg/generated/openapi/zz_generated.openapi.go ] ||
  make -C kubernetes-1.20.2 gen_openapi

mkdir -p gopath/src/k8s.io
ln -sfn "$work/kubernetes-1.20.2" gopath/src/k8s.io/kubernetes
cd gopath/src/k8s.io/kubernetes
GO111MODULE=off GOPATH="$work/gopath" GOCACHE="$work/gocache" \
  go build -o "$work/kube-apiserver" ./cmd/kube-apiserver
echo "built $work/kube-apiserver"
