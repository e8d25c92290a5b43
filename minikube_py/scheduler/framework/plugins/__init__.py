"""The in-tree scheduler plugins (upstream pkg/scheduler/framework/plugins), one module per plugin."""
