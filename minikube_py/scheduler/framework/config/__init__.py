"""KubeSchedulerConfiguration (upstream pkg/scheduler/apis/config): types, defaults, validation, loading."""
