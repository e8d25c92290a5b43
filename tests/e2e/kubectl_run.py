"""Running the real kubectl against a test API server, one way for every e2e test.

A private HOME (kubectl writes its discovery cache and config there) and `--cache-dir` in
it, so tests never share or pollute a user's cache; `ok=True` asserts success and shows
kubectl's output when it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

KUBECTL = "/usr/bin/kubectl"


def kubectl(url: str, home: Path, *args: str, stdin: str | None = None, ok: bool = True,
            binary: str = KUBECTL, timeout: float = 60) -> subprocess.CompletedProcess:
    result = subprocess.run([binary, "-s", url, "--cache-dir", str(home / "cache"), *args],
                            check=False, input=stdin, capture_output=True, text=True,
                            timeout=timeout,
                            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    if ok:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result
