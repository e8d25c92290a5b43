"""The scheduling framework (upstream pkg/scheduler/framework): extension points, plugins, profiles."""
