"""The tournament page in a real browser (issue 51): a round robin of eight (a crosstable wider
than a phone) served by the web view (uvicorn, in a thread) to Debian's headless Chromium. At
360 px the page itself never scrolls sideways: the crosstable scrolls inside its own box; at
desktop width it fits; no console error, no Content-Security-Policy report.

Slow and needing the browser (as tests/web/test_browser.py): skipped where there is none.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy import Engine

from pbmserv.config import Settings
from pbmserv.web.app import make_app
from tests.support import free_port
from tests.web.browser_rig import (
    Browser,
    browser_fixture,  # noqa: F401 (the fixture browser)
    missing_browser,
)
from tests.web.pages_fixtures import site_settings_fixture  # noqa: F401 (fixture)
from tests.web.tournaments_rig import Club, seed_wins

if (why := missing_browser()) is not None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(f"CI needs the browser for the web view's tests: {why}")
    pytest.skip(why, allow_module_level=True)

PLAYERS = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]


@pytest.fixture
def served(engine: Engine, site_settings: Settings) -> Iterator[tuple[str, int]]:
    """The site at its address, over a round robin of eight with three rounds played."""
    club = Club(engine)
    club.begin("rr", "roundrobin", ["chameleon:size=3"], PLAYERS)
    for _ in range(3):
        club.play_round("rr", seed_wins(PLAYERS))
    port = free_port()
    config = uvicorn.Config(
        make_app(site_settings), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}", club.tournament_id("rr")
    finally:
        server.should_exit = True
        thread.join(10)


def widths(browser: Browser) -> dict[str, int]:
    return dict(
        browser.script(
            "var box = document.querySelector('table.crosstable').parentElement;"
            "return {page: document.documentElement.scrollWidth,"
            " screen: document.documentElement.clientWidth,"
            " box: box.clientWidth, table: box.scrollWidth};"
        )
    )


def test_the_crosstable_scrolls_in_its_box_on_a_phone(
    browser: Browser, served: tuple[str, int], tmp_path: Path
) -> None:
    base, number = served
    url = f"{base}/t/{number}"
    browser.read_log()
    with browser.phone(360):
        browser.open(url)
        seen = widths(browser)
        assert seen["screen"] == 360 and seen["page"] == 360, seen
        assert seen["table"] > seen["box"], seen  # eight columns of marks: it scrolls, inside
        browser.screenshot(tmp_path / "tournament-360.png", 360)
    browser.open(url)
    seen = widths(browser)
    assert seen["page"] == seen["screen"] and seen["table"] == seen["box"], seen
    browser.screenshot(tmp_path / "tournament-1000.png", 1000)
    browser.open(f"{base}/tournaments")
    assert browser.problems == []
