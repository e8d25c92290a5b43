"""The README runs as written (issue 24): every ```bash and ```python block, in order, against
a fresh `git clone` of the repository, as a newcomer would run them — an empty HOME, the
clone's `.venv`, the real kubectl — on a machine where other clusters may hold every default
port (the README's own commands use `--ports auto`).

How blocks run, chosen by a marker comment on the line before a block:
- no marker: a ```bash block runs in one shell (`set -euo pipefail`), its exported variables
  carried to the next block as a reader's terminal carries them; a ```python block runs as a
  script, twice (a script that fails on its second run, e.g. on a key it created, is a bug);
- `<!-- readme-test: background -->`: a command a reader leaves running in its own terminal
  (`start`): it runs in the background until it prints "minikube-py is ready"; the next
  background block stops it first (Ctrl-C, which the README tells the reader to press);
- `<!-- readme-test: pytest -->`: a test file, run with pytest;
- `<!-- readme-test: skip (why) -->`: not run, the reason is required.
Blocks without a language (sample output) are text.

The install step of hack/quickstart.sh is not repeated here (bench/newcomer.py measures it
from a fresh clone): the clone's `.venv` is assembled from this test run's environment — the
clone's own sources first on its path, the installed dependencies after — and marked installed
the way the script marks it, so the script goes straight to `start`.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.cluster_process import KUBECTL, REPO
from tests.integration.test_cli import Lines

BLOCK = re.compile(r"(?:<!-- readme-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>bash|python)\n"
                   r"(?P<body>.*?)```", re.DOTALL)
READY = "minikube-py is ready"


@dataclass(frozen=True)
class Block:
    lang: str
    mark: str
    body: str
    line: int

    def __str__(self) -> str:
        return f"README.md line {self.line} ({self.lang}{', ' + self.mark if self.mark else ''})"


def readme_blocks(text: str) -> list[Block]:
    return [Block(m["lang"], (m["mark"] or "").strip(), m["body"],
                  text.count("\n", 0, m.start("body")) + 1)
            for m in BLOCK.finditer(text)]


def test_every_block_is_run_or_skipped_for_a_reason() -> None:
    blocks = readme_blocks((REPO / "README.md").read_text())
    assert len(blocks) >= 10
    for block in blocks:
        kind = block.mark.split(" ", 1)[0]
        assert kind in ("", "background", "pytest", "skip"), block
        if kind == "skip":
            assert re.fullmatch(r"skip \(.{10,}\)", block.mark), f"{block}: say why"


def make_venv(clone: Path) -> Path:
    """The clone's .venv as hack/quickstart.sh leaves it, from this run's installed packages."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=60)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "readme_test.pth").write_text(f"{clone}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "minikube-py"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\n"
                      "from minikube_py.cli.main import main\nsys.exit(main())\n")
    script.chmod(0o755)
    stamp = subprocess.run("cksum < pyproject.toml", shell=True, cwd=clone, check=True,
                           capture_output=True, text=True).stdout
    (venv / ".minikube-py-installed").write_text(stamp)
    return venv


class Reader:
    """A reader's terminals: one running a server in the background, one for commands."""

    def __init__(self, clone: Path, home: Path) -> None:
        self.clone = clone
        self.env = {"HOME": str(home), "PATH": f"{clone / '.venv' / 'bin'}:"
                    f"{Path(KUBECTL).parent}:/usr/local/bin:/usr/bin:/bin",
                    "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
        self.exports = home / "exports.sh"
        self.exports.write_text("")
        self.server: subprocess.Popen | None = None
        self.server_out: Lines | None = None

    def background(self, block: Block) -> None:
        self.stop_server()
        self.server = subprocess.Popen(["bash", "-c", block.body], cwd=self.clone, env=self.env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, start_new_session=True)
        self.server_out = Lines(self.server.stdout)
        try:
            self.server_out.until(READY, 90)
        except (EOFError, queue.Empty) as exc:
            raise AssertionError(f"{block}: never ready:\n" + "\n".join(self.server_out.seen)) \
                from exc

    def stop_server(self) -> None:
        if self.server is None:
            return
        os.killpg(self.server.pid, signal.SIGINT)  # Ctrl-C in its terminal
        try:
            code = self.server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.server.pid, signal.SIGKILL)
            raise
        self.server = None
        assert code == 0, f"the server exited {code}"

    def bash(self, block: Block) -> None:
        script = (f"set -euo pipefail\nsource {self.exports}\n{block.body}\n"
                  f"export -p > {self.exports}\n")
        self.check(block, ["bash", "-c", script], timeout=180)

    def python(self, block: Block) -> None:
        for run in ("first", "second"):
            self.check(block, [str(self.clone / ".venv" / "bin" / "python"), "-c", block.body],
                       timeout=60, what=f"{run} run")

    def pytest(self, block: Block, where: Path) -> None:
        where.mkdir()
        (where / "test_readme_example.py").write_text(block.body)
        self.check(block, [str(self.clone / ".venv" / "bin" / "python"), "-m", "pytest", "-q",
                           "-p", "no:cacheprovider", str(where)], timeout=120, cwd=where)

    def check(self, block: Block, argv: list[str], *, timeout: float, what: str = "",
              cwd: Path | None = None) -> None:
        began = time.monotonic()
        done = subprocess.run(argv, check=False, cwd=cwd or self.clone, env=self.env,
                              capture_output=True,
                              text=True, timeout=timeout)
        assert done.returncode == 0, (
            f"{block} {what} failed ({done.returncode}) after {time.monotonic() - began:.1f} s"
            f"\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
            + (("\n--- server\n" + "\n".join(self.server_out.seen[-30:]))
               if self.server_out else ""))


@pytest.mark.skipif(not shutil.which("git"), reason="needs git (apt-get install git)")
def test_the_readme_runs_as_written_from_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "minikube_py"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    make_venv(clone)
    home = tmp_path / "home"
    home.mkdir()
    reader = Reader(clone, home)
    ran = 0
    try:
        for block in readme_blocks((clone / "README.md").read_text()):
            kind = block.mark.split(" ", 1)[0]
            if kind == "skip":
                continue
            if kind == "background":
                reader.background(block)
            elif kind == "pytest":
                reader.pytest(block, tmp_path / f"pytest-{block.line}")
            elif block.lang == "python":
                reader.python(block)
            else:
                reader.bash(block)
            ran += 1
    finally:
        if reader.server is not None:
            reader.stop_server()
    assert ran >= 8
