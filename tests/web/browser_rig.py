"""What tests/web/test_browser.py stands on: a real `pbmserv serve` with its web view and a
capturing SMTP relay, games played into it by real SMTP, and Debian's headless Chromium driven
by Selenium through Debian's chromedriver, with every console message and CSP report read back.

Selenium Manager never runs: the driver's path is given (``Service(executable_path=...)``) and
``SE_AVOID_STATS`` is set, so nothing is downloaded or reported at run time.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from pbmserv.db.engine import make_engine
from tests.e2e.processes import environment, start_serve
from tests.support import Received, Sink, free_port, make_mail, settle, smtp_send

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Seconds for a page to load, a key to lead somewhere, the web view to start.
WAIT = 20.0

ALICE, BOB = "alice@example.org", "bob@example.org"
PASSWORDS = {ALICE: "alice secret1", BOB: "bob hunter22"}
#: A short Chameleon game (5 x 5, not over): alice (seat 0) and bob (seat 1) by turns.
CHAMELEON_MOVES = ("a1x", "e5o", "b2x", "d4o", "c3o")
#: The opening of help hmdg's example game: bob's o goes on C3 in secret (answered at once),
#: then alice's x on C5 in secret (bob reveals nothing); bob is to move.
HMDG_MOVES = (
    (ALICE, "move", "E5"),
    (BOB, "move", "o"),
    (BOB, "move", "C3 row"),
    (ALICE, "move", "C5 col"),
    (BOB, "reveal", ""),
)
LINK = re.compile(r"http://127\.0\.0\.1:\d+/(?:g|p)/[^\s]+")
#: A board mail's links by what the line before each says (templates/mail/board.txt.j2).
SAID = {
    "page": "See this position",
    "since": "What happened since",
    "private": "Your own view",
}


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    for name, path in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)):
        if not os.access(path, os.X_OK):
            return f"no {name} at {path} (Debian's chromium and chromium-driver, as .ci/run has)"
    return None


# --- the server, and games played into it by mail ---------------------------------------


@dataclass
class PlayedSite:
    """A running `pbmserv serve` (SMTP on ``smtp_port``, web view at ``web``) after the games
    were played; ``sink`` holds every mail it sent."""

    web: str
    smtp_port: int
    sink: Sink
    engine: Engine
    log_path: Path
    boards: dict[str, int] = field(default_factory=dict)

    def send(self, sender: str, subject: str) -> list[Received]:
        before = len(self.sink.messages)
        assert smtp_send(self.smtp_port, make_mail(sender, subject))[0] == 250
        settle(self.engine)
        return self.sink.messages[before:]

    def board_mail(self, to: str, game: str) -> Received:
        """The last board mail of ``game``'s board to ``to``."""
        subject = f"{game} board {self.boards[game]}"
        return [m for m in self.sink.messages if m.to == to and m.subject == subject][-1]

    def links(self, mail: Received) -> dict[str, str]:
        """The web links of a board mail's text part, by what the line before each says:
        ``page``, ``since``, ``private``."""
        found: dict[str, str] = {}
        lines = mail.body.splitlines()
        for before, line in zip(lines, lines[1:], strict=False):
            if not LINK.fullmatch(line.strip()):
                continue
            assert line.strip().startswith(self.web), (line, self.web)
            kind = next((k for k, said in SAID.items() if before.startswith(said)), before)
            found[kind] = line.strip()
        return found


def _two_ports() -> tuple[int, int]:
    first = free_port()
    while (second := free_port()) == first:
        pass
    return first, second


def _wait_for_front_page(base: str, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/", timeout=5) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"no web view at {base}:\n{log_path.read_text()}")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(10)


@contextmanager
def played_site(
    db_url: str, folder: Path, play: Callable[[PlayedSite], None] | None = None
) -> Iterator[PlayedSite]:
    """`pbmserv serve` with its web view and links in mail, relaying to a capturing sink;
    alice and bob sign up and play a Chameleon and an HMDG game by SMTP (``play``: what is
    played instead)."""
    sink = Sink().start()
    smtp_port, web_port = _two_ports()
    base = f"http://127.0.0.1:{web_port}"
    env = environment(
        db_url,
        folder / "spool",
        PBMSERV_LISTEN=f"127.0.0.1:{smtp_port}",
        PBMSERV_WEB_LISTEN=f"127.0.0.1:{web_port}",
        PBMSERV_WEB_URL=base,
        PBMSERV_POLL_SECONDS="0.2",
        PBMSERV_RETRY_BASE_SECONDS="0.2",
        PBMSERV_RETRY_MAX_SECONDS="1",
        PBMSERV_RELAY_TLS="none",
    )
    env["PBMSERV_RELAY"] = sink.address  # environment() leaves the relay out: mail is spooled
    log_path = folder / "serve.log"
    engine = make_engine(db_url)
    server = start_serve(env, smtp_port, log_path)
    try:
        _wait_for_front_page(base, log_path)
        site = PlayedSite(base, smtp_port, sink, engine, log_path)
        (play or _play)(site)
        yield site
    finally:
        _stop(server)
        engine.dispose()
        sink.stop()
    assert "Traceback" not in log_path.read_text(errors="replace"), log_path.read_text()


def _board_number(out: list[Received], game: str) -> int:
    for mail in out:
        if found := re.fullmatch(rf"{game} board (\d+)", mail.subject):
            return int(found.group(1))
    raise AssertionError(f"no {game} board mail in {[m.subject for m in out]}")


def _play(site: PlayedSite) -> None:
    site.send(ALICE, "signup alice secret1")
    site.send(BOB, "signup bob hunter22")
    out = site.send(ALICE, "chameleon challenge -size=5 alice bob")
    site.boards["chameleon"] = board = _board_number(out, "chameleon")
    for ply, text in enumerate(CHAMELEON_MOVES):
        sender = (ALICE, BOB)[ply % 2]
        _ok(site.send(sender, f"chameleon move {board} {PASSWORDS[sender]} {text}"), sender)
    out = site.send(ALICE, "hmdg challenge alice bob")
    site.boards["hmdg"] = board = _board_number(out, "hmdg")
    for sender, verb, text in HMDG_MOVES:
        _ok(site.send(sender, f"hmdg {verb} {board} {PASSWORDS[sender]} {text}".strip()), sender)


def _ok(out: list[Received], sender: str) -> None:
    """The reply to ``sender`` took the move (a refusal says "Sorry")."""
    replies = [m for m in out if m.to == sender and m.subject.startswith("Re:")]
    assert replies and not any("Sorry" in m.body for m in replies), [m.body for m in replies]


# --- the browser ----------------------------------------------------------------------------


class Browser:
    """Headless Chromium through Selenium, reading the browser's log after every step: what it
    said at level SEVERE, and every Content-Security-Policy report, are kept in ``problems``."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--force-device-scale-factor=1",
            "--window-size=1000,1000",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
        ):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=CHROMEDRIVER)
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(WAIT)
        self.problems: list[dict[str, Any]] = []

    def quit(self) -> None:
        self.driver.quit()

    def read_log(self) -> list[dict[str, Any]]:
        """The browser's log since the last read; the problems among it are kept."""
        entries: list[dict[str, Any]] = self.driver.get_log("browser")
        for entry in entries:
            if entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"]:
                self.problems.append(entry)
        return entries

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.wait_loaded(url)

    def wait_loaded(self, url: str) -> None:
        """Wait until ``url`` is loaded, its picture (if any) drawn; then read the log."""
        self.wait(
            lambda: (
                self.driver.current_url == url
                and self.script("return document.readyState") == "complete"
            ),
            f"{url} (at {self.driver.current_url})",
        )
        self.read_log()

    def wait(self, condition: Callable[[], Any], what: str) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, WAIT).until(lambda _driver: condition(), f"waited for {what}")

    def script(self, source: str, *args: Any) -> Any:
        return self.driver.execute_script(source, *args)

    def press(self, key: str) -> None:
        """A key pressed on the page (on whatever has the focus: the page itself)."""
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver).send_keys(key).perform()

    def text_of(self, selector: str) -> str:
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.CSS_SELECTOR, selector).text)

    def href(self, step: str) -> str | None:
        """Where the move control ``step`` (first, prev, next, last) leads; None: disabled."""
        return self.script(
            "var a = document.querySelector('nav.steps a[data-step=\"' + arguments[0] + '\"]');"
            "return a ? a.href : null;",
            step,
        )

    def click_step(self, step: str) -> str:
        from selenium.webdriver.common.by import By

        target = self.href(step)
        assert target is not None, f"no {step} link on {self.driver.current_url}"
        self.driver.find_element(By.CSS_SELECTOR, f'nav.steps a[data-step="{step}"]').click()
        self.wait_loaded(target)
        return target

    def picture_drawn(self) -> int:
        """The natural width of the board's picture once it has loaded (0: it did not draw)."""
        self.wait(
            lambda: self.script(
                "var i = document.querySelector('figure.board img');"
                "return i !== null && i.complete;"
            ),
            "the picture to load",
        )
        return int(self.script("return document.querySelector('figure.board img').naturalWidth"))

    def screenshot(self, path: Path, width: int) -> None:
        """The whole page as a screen ``width`` px wide shows it, top to bottom, into ``path``;
        the screen is as tall as it was after."""
        height = self.script("return window.innerHeight")
        whole = min(int(self.script("return document.documentElement.scrollHeight")), 6000)
        self._device(width, whole)
        try:
            self.driver.save_screenshot(str(path))
        finally:
            self._device(width, height)

    def _device(self, width: int, height: int) -> None:
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
        )

    @contextmanager
    def phone(self, width: int = 360, height: int = 740) -> Iterator[None]:
        """The page as a phone ``width`` CSS px wide shows it (a headless window is never
        narrower than 500 px: the DevTools protocol's device mode, which heeds the viewport
        meta tag as a phone does)."""
        self._device(width, height)
        try:
            yield
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Browser]:
    """One browser for a test module (a test module takes it by importing this function)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_AVOID_STATS", "true")  # Selenium tells nobody about this run
        started = Browser()
        try:
            yield started
        finally:
            started.quit()
