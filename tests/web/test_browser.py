"""The web view in a real browser (issue 50): games played by real SMTP into a real
`pbmserv serve` (its web view a child of it, links in its mail), then Debian's headless Chromium,
driven by Selenium through Debian's chromedriver, opens the links of the board mail.

It steps through the positions by the First / Previous / Next / Last links and by the arrow
keys and Home / End (the page's small script), sees the picture drawn, reads no error and no
Content-Security-Policy report in the browser's log, shows the pages on a phone 360 px wide with
no sideways scrolling (screenshots in the test's tmp_path), and opens a player's private link of
an HMDG board: it shows that seat's hidden piece, and neither the public page nor the other
seat's link does.

Selenium Manager is off (the driver's path is given, ``SE_AVOID_STATS`` set): nothing is
downloaded at run time. CI installs chromium and chromium-driver (.ci/run) and this test fails
there without them; elsewhere it is skipped.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.browser_rig import (
    ALICE,
    BOB,
    CHAMELEON_MOVES,
    Browser,
    PlayedSite,
    browser_fixture,  # noqa: F401 (the fixture browser)
    missing_browser,
    played_site,
)

if (why := missing_browser()) is not None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(f"CI needs the browser for the web view's tests: {why}")
    pytest.skip(why, allow_module_level=True)

PLIES = len(CHAMELEON_MOVES)
PHONE = 360


@pytest.fixture(scope="module")
def site(_sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayedSite]:
    """The server after the games, on a SQLite file of its own (the browser is the subject
    here, not the database: every engine's pages are tested in tests/web/test_pages*.py)."""
    folder = tmp_path_factory.mktemp("browser")
    shutil.copy(_sqlite_template, folder / "pbmserv.db")
    with played_site(f"sqlite:///{folder / 'pbmserv.db'}", folder) as played:
        yield played


@pytest.fixture(autouse=True)
def fresh_log(browser: Browser) -> None:
    """Each test reads only what the browser said during it."""
    browser.read_log()
    browser.problems.clear()


def at(site: PlayedSite, ply: int, game: str = "chameleon") -> str:
    return f"{site.web}/g/{site.boards[game]}/{ply}"


def cells(diagram: str) -> dict[str, str]:
    """An HMDG text diagram's points by name (``C3``): the rows between their letters."""
    found = {}
    for line in diagram.splitlines():
        words = line.split()
        if len(words) == 11 and words[0] == words[-1] and re.fullmatch("[A-HJ]", words[0]):
            found.update({f"{words[0]}{col}": words[col] for col in range(1, 10)})
    assert len(found) == 81, diagram
    return found


def test_the_board_mails_link_opens_its_page_and_the_links_step_through_it(
    site: PlayedSite, browser: Browser
) -> None:
    mail = site.board_mail(BOB, "chameleon")
    links = site.links(mail)
    assert links["page"] == at(site, PLIES)
    browser.open(links["page"])
    assert "board" in browser.driver.title and browser.text_of("h1").startswith("Chameleon")
    assert browser.picture_drawn() > 0
    assert browser.href("next") is None and browser.href("last") is None  # the position now
    assert browser.click_step("prev") == at(site, PLIES - 1)
    assert browser.picture_drawn() > 0
    assert "A past position" in browser.text_of("p.past")
    assert browser.click_step("next") == at(site, PLIES)
    assert browser.click_step("first") == at(site, 0)
    assert browser.picture_drawn() > 0
    assert browser.href("prev") is None and browser.href("first") is None
    assert browser.click_step("next") == at(site, 1)
    assert browser.click_step("last") == at(site, PLIES)
    assert browser.problems == []


def test_arrow_keys_and_home_and_end_step_as_the_links_do(
    site: PlayedSite, browser: Browser
) -> None:
    from selenium.webdriver.common.keys import Keys

    browser.open(at(site, 2))
    for key, ply in (
        (Keys.ARROW_LEFT, 1),
        (Keys.ARROW_RIGHT, 2),
        (Keys.END, PLIES),
        (Keys.ARROW_RIGHT, PLIES),  # nothing after the last: the page stays
        (Keys.HOME, 0),
        (Keys.ARROW_LEFT, 0),  # nothing before the start
        (Keys.ARROW_RIGHT, 1),
    ):
        browser.press(key)
        browser.wait_loaded(at(site, ply))
        assert browser.picture_drawn() > 0
    # In the text diagram the arrow keys scroll it and lead nowhere.
    browser.script("document.getElementById('diagram').focus()")
    browser.press(Keys.ARROW_RIGHT)
    browser.script("document.activeElement.blur()")
    browser.press(Keys.ARROW_LEFT)
    browser.wait_loaded(at(site, 0))
    assert browser.problems == []


def test_the_since_link_marks_the_moves_since_and_keeps_marking_them(
    site: PlayedSite, browser: Browser
) -> None:
    links = site.links(site.board_mail(BOB, "chameleon"))
    # bob's last move was the 4th: the position after it, the 5th marked new.
    assert links["since"] == f"{at(site, PLIES - 1)}?since={PLIES - 1}"
    browser.open(links["since"])
    assert browser.script("return document.querySelectorAll('ol.moves li.new').length") == 1
    assert browser.click_step("next") == f"{at(site, PLIES)}?since={PLIES - 1}"
    assert "1 new move" in browser.text_of("p.news")
    assert browser.problems == []


def test_at_360_px_wide_no_page_scrolls_sideways(
    site: PlayedSite, browser: Browser, tmp_path: Path
) -> None:
    private = site.links(site.board_mail(BOB, "hmdg"))["private"]
    pages = {
        "chameleon": at(site, PLIES),
        "chameleon-start": at(site, 0),
        "hmdg": site.links(site.board_mail(BOB, "hmdg"))["page"],
        "hmdg-private": private,
        "front": f"{site.web}/",
        "games": f"{site.web}/games",
        "rules": f"{site.web}/rules/hmdg",
    }
    wide = []
    with browser.phone(PHONE):
        for name, url in pages.items():
            browser.open(url)
            if name.startswith(("chameleon", "hmdg")):
                assert browser.picture_drawn() > 0
                right = browser.script(
                    "return document.querySelector('figure.board img')"
                    ".getBoundingClientRect().right"
                )
                assert right <= PHONE, f"{name}: the picture runs to {right} px"
            inner, scroll = browser.script(
                "return [window.innerWidth, document.documentElement.scrollWidth]"
            )
            assert inner == PHONE, f"{name}: the window is {inner} px wide, not {PHONE}"
            browser.screenshot(tmp_path / f"{name}-{PHONE}px.png", PHONE)
            if scroll > inner:
                wide.append(f"{name} ({url}): {scroll} px wide in a {inner} px window")
    assert wide == [], wide
    assert (tmp_path / f"chameleon-{PHONE}px.png").stat().st_size > 0
    assert browser.problems == []


def test_a_private_link_shows_its_seats_secret_and_the_public_page_does_not(
    site: PlayedSite, browser: Browser
) -> None:
    bobs, alices = (site.links(site.board_mail(who, "hmdg")) for who in (BOB, ALICE))
    found = re.fullmatch(rf"{re.escape(site.web)}/p/([^/]+)/(\d+)", bobs["private"])
    assert found, bobs
    ply = int(found.group(2))
    public = f"{site.web}/g/{site.boards['hmdg']}/{ply}"
    assert bobs["page"] == public == alices["page"]

    browser.open(bobs["private"])
    assert browser.picture_drawn() > 0
    assert "Your own view" in browser.text_of("p.private")
    bob_sees = cells(browser.text_of("#diagram"))
    # bob's o, hidden on C3, is his to see; alice's x, hidden on C5, is not.
    assert (bob_sees["C3"], bob_sees["C5"]) == ("o", ".")
    assert "row C (C3)" in browser.text_of("#diagram")  # his own announcement, in full
    # The steps stay in his own view.
    back = browser.click_step("prev")
    assert back.startswith(f"{site.web}/p/{found.group(1)}/")
    assert cells(browser.text_of("#diagram"))["C3"] == "o"

    browser.open(alices["private"])
    alice_sees = cells(browser.text_of("#diagram"))
    assert (alice_sees["C3"], alice_sees["C5"]) == (".", "x")

    browser.open(public)
    assert browser.picture_drawn() > 0
    everyone_sees = cells(browser.text_of("#diagram"))
    assert (everyone_sees["C3"], everyone_sees["C5"]) == (".", ".")
    assert everyone_sees["E5"] in ("x", "X")  # the opening piece is public
    page_text = browser.text_of("body")
    alt = browser.script("return document.querySelector('figure.board img').alt")
    for secret in ("C3", "C5"):
        assert secret not in page_text and secret not in alt, secret
    # What differs between the views is the secrets alone.
    differ = {point for point in bob_sees if bob_sees[point] != everyone_sees[point]}
    assert differ == {"C3"}
    assert browser.problems == []


def test_the_browser_log_does_show_a_csp_violation(site: PlayedSite, browser: Browser) -> None:
    """The checks above would see a violation: an inline style, which the policy forbids,
    is refused and reported in the log they read."""
    browser.open(at(site, 1))
    browser.read_log()
    browser.problems.clear()
    browser.script("document.body.setAttribute('style', 'background: red')")
    browser.wait(lambda: (browser.read_log(), browser.problems)[1], "the browser's report")
    assert any("Content Security Policy" in p["message"] for p in browser.problems)
    assert browser.script("return getComputedStyle(document.body).backgroundColor") != (
        "rgb(255, 0, 0)"
    )
