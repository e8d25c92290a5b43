"""The command line: `minikube-py start`, `minikube-py storage ...`.

Kubernetes v1.0 piece: cmd/*/app — each component's flags (with v1.0's names where one
exists: --etcd-servers) and the wiring that builds the component from them. The
launchers in the repository's cmd/ directory only call `main`; everything else is here, one
small module per command:

    main.py               argument parsing, logging, error reporting, exit codes
    runtime.py            event loop (uvloop when installed) and stop signals
    start.py              `start`: open the store, serve /healthz /metrics /version
    storage_target.py     which store a `storage` command talks to (data dir or etcd)
    storage_inspector.py  `storage ls|get|history|watch|compact`
    output.py             pure rendering of keys, values and events (table, json, keys)

The entry point is `minikube_py.cli.main:main` (the `minikube-py` console script). It is not
re-exported here: `python -m minikube_py.cli.main` must not find its module imported already.
"""
