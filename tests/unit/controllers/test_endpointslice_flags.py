"""The EndpointSlice controllers' flags reach ControllerOptions, and the slice sizes are held
to upstream's bounds (EndpointSliceControllerOptions.Validate: 1 to 1000)."""

from __future__ import annotations

import pytest

from minikube_py.cli.storage_target import ConfigError
from minikube_py.controllers.options import ALL_CONTROLLERS
from tests.unit.test_cli_config import options


def test_flags_reach_the_options() -> None:
    opts = options("--max-endpoints-per-slice", "7", "--concurrent-service-endpoint-syncs",
                   "3", "--mirroring-max-endpoints-per-subset", "9",
                   "--mirroring-concurrent-service-endpoint-syncs", "2").controllers
    assert (opts.max_endpoints_per_slice, opts.concurrent_service_endpoint_syncs,
            opts.mirroring_max_endpoints_per_subset,
            opts.mirroring_concurrent_service_endpoint_syncs) == (7, 3, 9, 2)
    assert {"endpointslice", "endpointslicemirroring"} <= set(ALL_CONTROLLERS)


@pytest.mark.parametrize("flag, value, message", [
    ("--max-endpoints-per-slice", "0", "must be at least 1, got 0"),
    ("--max-endpoints-per-slice", "1001", "must be less than or equal to 1000, got 1001"),
    ("--mirroring-max-endpoints-per-subset", "5000",
     "must be less than or equal to 1000, got 5000"),
])
def test_slice_sizes_are_bounded(flag: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"{flag}: {message}"):
        options(flag, value)
