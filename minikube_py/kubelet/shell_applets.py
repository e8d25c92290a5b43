"""The busybox applet table: every program name the simulated shell can run.

Kubernetes piece: none — `/bin` of a busybox image (one binary, many names). The applets
live by topic in shell_applets_sys.py (process and machine), shell_applets_text.py
(filters), shell_applets_files.py (files, tar) and shell_applets_test.py (test, expr); shell_applets_perl.py is the docs' pi one-liner.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import (
    shell_applets_files,
    shell_applets_perl,
    shell_applets_sys,
    shell_applets_test,
    shell_applets_text,
)
from .shell_applets_sys import Applet

APPLETS: Mapping[str, Applet] = {
    **shell_applets_sys.APPLETS,
    **shell_applets_text.APPLETS,
    **shell_applets_files.APPLETS,
    **shell_applets_test.APPLETS,
    **shell_applets_perl.APPLETS,
}
