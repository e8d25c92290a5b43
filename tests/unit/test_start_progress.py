"""`start`'s progress output (cli/start_progress.py): a timed line per step; on a terminal a
live count of Ready nodes (rich), elsewhere plain lines only."""

from __future__ import annotations

import io
import re

from minikube_py.cli.start_progress import Lines


def test_plain_lines_off_a_terminal() -> None:
    out = io.StringIO()
    progress = Lines(out)  # a StringIO is no terminal: no live display
    progress.step("store: embedded in /data")
    progress.nodes(1, 3, "2 node(s) not Ready (e.g. node-1)")
    progress.nodes(3, 3, "")
    progress.done()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"  store: embedded in /data \(\d+\.\d\d s\)", lines[0])
    assert re.fullmatch(r"  3 nodes Ready, components Healthy \(\d+\.\d\d s\)", lines[1])
    assert "\x1b" not in out.getvalue()


def test_a_terminal_gets_a_live_count_that_ends_in_the_ready_line() -> None:
    out = io.StringIO()
    progress = Lines(out, live=True)
    progress.nodes(0, 2, "2 node(s) not Ready (e.g. node-0)")
    assert progress._status is not None  # rich's status display is running
    progress.nodes(1, 2, "1 node(s) not Ready (e.g. node-1)")
    progress.done()
    assert progress._status is None
    assert out.getvalue().rstrip().splitlines()[-1].startswith("  2 nodes Ready, components")


def test_without_nodes_the_wait_is_for_components() -> None:
    out = io.StringIO()
    progress = Lines(out)
    progress.nodes(0, 0, "")
    progress.done()
    assert out.getvalue().startswith("  components Healthy (")
