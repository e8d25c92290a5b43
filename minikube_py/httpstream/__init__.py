"""Upgraded HTTP streams shared by the API server and the kubelet.

Kubernetes piece: k8s.io/apimachinery/pkg/util/httpstream — `spdy` (SPDY/3.1 framing, as
moby/spdystream speaks it), `wsstream` (the WebSocket channel and stream protocols), and the
plain HTTP/1.1 upgrade (`upgrade`: the 101, the `X-Stream-Protocol-Version` negotiation, and the
byte relay upstream's UpgradeAwareHandler does). Pure framing in `spdy` and `wsstream`; I/O only
in `upgrade`.
"""
