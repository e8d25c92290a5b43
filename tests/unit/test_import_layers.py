"""The import layers declared in pyproject.toml ([tool.importlinter]) hold.

api -> storage -> registry -> apiserver -> client -> components -> cli, lowest first: a module
imports only from layers below its own, and the components (controllers, scheduler, kubelet)
reach the cluster only through the client, as upstream's do through client-go. Checked with
import-linter, as kopf checks its own layering.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept():
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if linter is None:
        pytest.skip("import-linter is not installed (it is in the `test` extra)")
    done = subprocess.run([linter, "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and "KEPT" in done.stdout
