"""The player pages in a real browser (issue 51): alice and bob play a few short rated boards by
real SMTP into a real `pbmserv serve` (its web view a child of it), each ended at once by a
resignation; then Debian's headless Chromium opens alice's page at 360 px and at 1280 px wide.

On both: the page never scrolls sideways, each rating chart is drawn (an inline <svg> with a
box of its own, within the screen), its points link to the boards' pages, and the table beside
it has a row a point; the browser's log holds no error and no Content-Security-Policy report
(screenshots in the test's tmp_path). The rating list, the boards between the two, the search,
a tournament's page and the Atom feeds open without an error too.

Needs the browser, as tests/web/test_browser.py does: skipped where there is none, and a
failure in CI without it.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support import Received
from tests.web.browser_rig import (
    ALICE,
    BOB,
    PASSWORDS,
    Browser,
    PlayedSite,
    browser_fixture,  # noqa: F401 (the fixture browser)
    missing_browser,
    played_site,
)
from tests.web.tournaments_rig import Club, seed_wins

if (why := missing_browser()) is not None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(f"CI needs the browser for the web view's tests: {why}")
    pytest.skip(why, allow_module_level=True)

PHONE, DESKTOP = 360, 1280
USERIDS = {ALICE: "alice", BOB: "bob"}
#: The rated boards: who wins each (the winner challenges, the loser resigns at once: both
#: seats accepted, so the board is rated). Five of Chameleon, one of Extinction (a one-point
#: chart).
RATED = (
    ("chameleon", ALICE),
    ("chameleon", BOB),
    ("chameleon", ALICE),
    ("chameleon", ALICE),
    ("chameleon", BOB),
    ("extinction", BOB),
)
CHALLENGE = {"chameleon": "chameleon challenge -size=5", "extinction": "extinction challenge"}
PLAYERS = ["cat", "dan", "eve"]  # a round robin's


def _play(site: PlayedSite) -> None:
    """Both sign up; the rated boards; one Chameleon board left running."""
    site.send(ALICE, "signup alice secret1")
    site.send(BOB, "signup bob hunter22")
    for i, (game, winner) in enumerate(RATED):
        loser = BOB if winner == ALICE else ALICE
        out = site.send(winner, f"{CHALLENGE[game]} {USERIDS[winner]} {USERIDS[loser]}")
        site.boards[f"{game}-{i}"] = board = _board_number(out, game)
        words = PASSWORDS[loser]
        replies = site.send(loser, f"{game} resign {board} {words}")
        assert not any("Sorry" in m.body for m in replies if m.to == loser), replies
    out = site.send(ALICE, f"{CHALLENGE['chameleon']} alice bob")
    site.boards["running"] = _board_number(out, "chameleon")


def _board_number(out: list[Received], game: str) -> int:
    for mail in out:
        if found := re.fullmatch(rf"{game} board (\d+)", mail.subject):
            return int(found.group(1))
    raise AssertionError(f"no {game} board mail in {[m.subject for m in out]}")


@pytest.fixture(scope="module")
def site(_sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayedSite]:
    """The server after the boards, on a SQLite file of its own; and a round robin of three
    begun by the operator's hand on the same database (one round played)."""
    folder = tmp_path_factory.mktemp("browser-players")
    shutil.copy(_sqlite_template, folder / "pbmserv.db")
    with played_site(f"sqlite:///{folder / 'pbmserv.db'}", folder, _play) as played:
        club = Club(played.engine)
        club.begin("rr", "roundrobin", ["chameleon:size=3"], PLAYERS)
        club.play_round("rr", seed_wins(PLAYERS))
        played.boards["tournament"] = club.tournament_id("rr")
        yield played


@pytest.fixture(autouse=True)
def fresh_log(browser: Browser) -> None:
    browser.read_log()
    browser.problems.clear()


@contextmanager
def screen(browser: Browser, width: int, height: int, mobile: bool) -> Iterator[None]:
    """The page on a screen ``width`` CSS px wide (a phone's heeds the viewport meta tag)."""
    browser.driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    try:
        yield
    finally:
        browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def expected_points(site: PlayedSite) -> dict[str, list[int]]:
    """alice's rated boards by game, in the order rated."""
    found: dict[str, list[int]] = {}
    for i, (game, _winner) in enumerate(RATED):
        found.setdefault(game, []).append(site.boards[f"{game}-{i}"])
    return found


CHARTS = """
return Array.from(document.querySelectorAll('section.rating')).map(function (section) {
  var svg = section.querySelector('figure.chart svg');
  var box = svg ? svg.getBoundingClientRect() : null;
  var rows = section.querySelectorAll('div.points table tbody tr');
  return {
    game: section.getAttribute('aria-labelledby'),
    box: box ? [box.left, box.top, box.width, box.height, box.right] : null,
    circles: svg ? Array.from(svg.querySelectorAll('a circle')).filter(function (c) {
      var r = c.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length : 0,
    links: svg ? Array.from(svg.querySelectorAll('a')).map(function (a) {
      return a.getAttribute('href'); }) : [],
    rows: Array.from(rows).map(function (tr) {
      var a = tr.querySelector('a'); return a ? a.getAttribute('href') : null; })
  };
});
"""


def check_player_page(site: PlayedSite, browser: Browser, width: int, shot: Path) -> None:
    browser.open(f"{site.web}/u/alice")
    assert browser.text_of("h1") == "alice"
    inner, scroll = browser.script(
        "return [window.innerWidth, document.documentElement.scrollWidth]"
    )
    assert inner == width, f"the window is {inner} px wide, not {width}"
    browser.screenshot(shot, width)
    assert scroll <= inner, f"/u/alice is {scroll} px wide in a {inner} px window"
    charts = {c["game"]: c for c in browser.script(CHARTS)}
    expected = expected_points(site)
    assert set(charts) == {f"rating-{game}" for game in expected}, charts
    for game, boards in expected.items():
        chart = charts[f"rating-{game}"]
        assert chart["box"] is not None, f"no chart of {game}"
        left, _top, wide, high, right = chart["box"]
        assert wide > 0 and high > 0, f"{game}: the chart is not drawn: {chart['box']}"
        assert left >= 0 and right <= inner, f"{game}: the chart runs {left}..{right} px"
        assert chart["circles"] == len(boards), chart
        assert chart["links"] == [f"/g/{board}" for board in boards], chart
        assert chart["rows"] == chart["links"], chart  # the table: a row a point, same order


def test_the_player_page_and_its_charts_on_a_phone_and_a_desktop(
    site: PlayedSite, browser: Browser, tmp_path: Path
) -> None:
    with screen(browser, PHONE, 740, mobile=True):
        check_player_page(site, browser, PHONE, tmp_path / f"player-{PHONE}px.png")
    with screen(browser, DESKTOP, 900, mobile=False):
        check_player_page(site, browser, DESKTOP, tmp_path / f"player-{DESKTOP}px.png")
        # Each point's board exists; the newest point leads to it when clicked.
        for board in sorted({b for boards in expected_points(site).values() for b in boards}):
            with urllib.request.urlopen(f"{site.web}/g/{board}", timeout=10) as response:
                assert response.status == 200, board
        from selenium.webdriver.common.by import By

        newest = expected_points(site)["chameleon"][-1]
        point = browser.driver.find_elements(
            By.CSS_SELECTOR, f'section.rating svg a[href="/g/{newest}"]'
        )
        assert len(point) == 1
        browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", point[0])
        point[0].click()
        browser.wait_loaded(f"{site.web}/g/{newest}")
        assert browser.picture_drawn() > 0
    for width in (PHONE, DESKTOP):
        assert (tmp_path / f"player-{width}px.png").stat().st_size > 0
    assert browser.problems == []


def test_the_ratings_the_two_players_the_search_and_a_tournament_on_a_phone(
    site: PlayedSite, browser: Browser, tmp_path: Path
) -> None:
    pages = {
        "ratings": "/ratings/chameleon",
        "versus": "/u/alice/vs/bob",
        "search": "/search?q=al",
        "tournament": f"/t/{site.boards['tournament']}",
        "tournaments": "/tournaments",
    }
    wide = []
    with screen(browser, PHONE, 740, mobile=True):
        for name, path in pages.items():
            browser.open(f"{site.web}{path}")
            inner, scroll = browser.script(
                "return [window.innerWidth, document.documentElement.scrollWidth]"
            )
            browser.screenshot(tmp_path / f"{name}-{PHONE}px.png", PHONE)
            if scroll > inner:
                wide.append(f"{path}: {scroll} px wide in a {inner} px window")
    assert wide == [], wide
    assert browser.problems == []


def test_the_feeds_open_without_an_error(site: PlayedSite, browser: Browser) -> None:
    for path in ("/u/alice/feed.atom", f"/g/{site.boards['running']}/feed.atom"):
        browser.open(f"{site.web}{path}")
        # Chromium shows a feed as its text (application/atom+xml as text/plain).
        shown = browser.text_of("html")
        assert "<feed" in shown and "alice" in shown, (path, shown[:300])
    # Chromium asks a feed's icon at /favicon.ico: the site's, not a 404 in the console.
    assert browser.problems == []


DATES = """
return Array.from(document.querySelectorAll('figure.chart svg')).map(function (svg) {
  return Array.from(svg.querySelectorAll('g.axis.dates text')).map(function (text) {
    var box = text.getBoundingClientRect(); return [box.left, box.right]; });
});
"""


def test_the_dates_under_a_chart_do_not_overlap(site: PlayedSite, browser: Browser) -> None:
    browser.open(f"{site.web}/u/alice")
    for spans in browser.script(DATES):
        assert spans and all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
