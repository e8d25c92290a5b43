"""The scheduler (Kubernetes v1.0 plugin/pkg/scheduler): a pure algorithm (predicates,
priorities, selectHost) inside an I/O shell (informers, FIFO, binder)."""
