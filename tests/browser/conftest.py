"""Fixtures of the console's browser tests: a running cluster that serves the console, and a
page of Debian's chromium driven by Playwright.

Playwright's wheel carries its driver; the browser is Debian's (`apt-get install chromium`,
hack/test.sh does it) — never `playwright install`, the machine has no internet. Without
either, every test here skips with the reason.

Screenshots: `screenshot(page, name)` writes to the session's temp dir always, and also to
docs/images/console-<name>.png when MINIKUBE_PY_SCREENSHOTS=1 (to refresh the docs' images).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minikube_py.testing import Cluster

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
#: a stopped node's kubelet renews nothing: after 2 s of silence the node is NotReady
FAST_NODE_FAILURE = {"node-monitor-grace-period": "2s", "node-monitor-period": "0.2s",
                     "node-lease-renew-interval": "0.2s", "node-status-update-frequency": "0.2s"}


def _sync_playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; the test extra has it)")
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        pytest.skip("no /usr/bin/chromium: apt-get install chromium (hack/test.sh does)")
    return sync_playwright


def launch(playwright: Any) -> Any:
    """Debian's chromium, headless, with nothing that reaches the network."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                      headless=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _sync_playwright()
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def console_cluster() -> Iterator[Cluster]:
    """Three nodes that go NotReady two seconds after their kubelet stops, with the console."""
    with Cluster(nodes=3, console=True, flags=FAST_NODE_FAILURE) as cluster:
        yield cluster


@pytest.fixture
def page(browser: Any, console_cluster: Cluster) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"the page threw: {errors}"


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("console-screenshots")


@pytest.fixture
def screenshot(screenshot_dir: Path) -> Any:
    def take(page: Any, name: str) -> Path:
        path = screenshot_dir / f"console-{name}.png"
        page.screenshot(path=str(path), full_page=False)
        if os.environ.get("MINIKUBE_PY_SCREENSHOTS") == "1":
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, DOCS_IMAGES / f"console-{name}.png")
        return path
    return take
