"""The suite's own hygiene: a skipped test says why and how to stop skipping it.

`pytest.importorskip("x")` without `reason=` skips with "could not import 'x'", which leaves
the reader to find out that `x` is an optional test dependency; every call here names what is
missing and the install command (`pip install -e '.[test]'`, or the `etcd` extra)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def importorskip_calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip"]


def reason_of(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "reason" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return None


def test_every_importorskip_says_how_to_install() -> None:
    bad: list[str] = []
    found = 0
    for path in sorted(TESTS.rglob("*.py")):
        for call in importorskip_calls(ast.parse(path.read_text(), str(path))):
            found += 1
            reason = reason_of(call)
            if reason is None or "pip install" not in reason:
                bad.append(f"{path.relative_to(TESTS.parent)}:{call.lineno}: {reason!r}")
    assert found > 10  # the walk sees the suite (a wrong root would pass vacuously)
    assert not bad, "importorskip without an install hint:\n" + "\n".join(bad)
