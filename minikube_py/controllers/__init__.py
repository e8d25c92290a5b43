"""The controller manager's controllers (Kubernetes v1.0 pkg/controller and
cmd/kube-controller-manager): each one watches through shared informers and reconciles
through the API server, never touching storage."""
