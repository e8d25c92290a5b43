"""Benchmarks of minikube_py (run from the repository root, e.g. `python -m bench.store`)."""
