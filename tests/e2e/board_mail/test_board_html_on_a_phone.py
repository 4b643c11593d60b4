"""Board mail read on a phone: the HTML part of every game's board mail (and of an HMDG board
whose announcements run to long lines), with its picture, in headless Chromium made a 375 px
wide phone. Nothing may widen the page: the picture scales down, prose wraps in paragraphs
(a list item keeps its hanging indent), and diagrams and command lines stay preformatted,
scrolling sideways in their own box.

A headless window is never narrower than 500 px, so the page is made a phone the way the
browser's device mode does it (the DevTools protocol's ``Emulation.setDeviceMetricsOverride``
with ``mobile``, which also heeds the viewport meta tag), over ``--remote-debugging-pipe``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.e2e.board_mail.test_board_pictures_in_a_browser import ALICE, BOB, BROWSER, send
from tests.support import Received, RunningServer, Sink

pytestmark = pytest.mark.db

PHONE = 375  # px: a common phone's width in CSS pixels
TIMEOUT = 30.0  # s: for the browser to answer, or a page to load

#: An HMDG game as tests/golden/hmdg_game.txt plays it, up to where bob must answer a move:
#: its board mail's announcements are lines of 70 characters and more, wrapped with an indent.
HMDG_MOVES = [
    (ALICE, "hmdg move {b} alice secret1 E5"),
    (BOB, "hmdg move {b} bob hunter22 o"),
    (BOB, "hmdg move {b} bob hunter22 C3 row"),
    (ALICE, "hmdg move {b} alice secret1 A5 col"),
    (BOB, "hmdg reveal {b} bob hunter22"),
    (BOB, "hmdg move {b} bob hunter22 E7 col"),
    (ALICE, "hmdg move {b} alice secret1 B5 col"),
    (BOB, "hmdg reveal {b} bob hunter22 none"),
    (BOB, "hmdg move {b} bob hunter22 B5 row"),
    (ALICE, "hmdg reveal {b} alice secret1 B5"),
    (ALICE, "hmdg move {b} alice secret1 C5 col"),
    (BOB, "hmdg reveal {b} bob hunter22"),
    (BOB, "hmdg move {b} bob hunter22 C4 row"),
    (ALICE, "hmdg reveal {b} alice secret1 C5"),
    (ALICE, "hmdg move {b} alice secret1 D5 col"),
]

#: For each game: a line of its board diagram, which must stay preformatted.
DIAGRAM = {
    "buffalo": "a b c d e f g h i j k",
    "owlman": "a b c d e f g h",
    "chameleon": "a b c d e",
    "entropy": "a  b  c  d  e",
    "extinction": "a b c d e f g h",
    "hmdg": "1 2 3 4 5 6 7 8 9",
}

#: What the page looks like to the test: sizes in CSS pixels, and where each text went.
MEASURE = """JSON.stringify((() => {
  const box = (e) => e.getBoundingClientRect();
  const lefts = (p) => {  // the left end of each line p wraps into, top to bottom
    const range = document.createRange();
    range.selectNodeContents(p);
    const lines = new Map();
    for (const r of range.getClientRects()) {
      if (r.width === 0) continue;
      const top = Math.round(r.top);
      lines.set(top, Math.min(lines.get(top) ?? r.left, r.left));
    }
    return [...lines.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  };
  return {
    width: document.documentElement.clientWidth,
    scrollWidth: document.documentElement.scrollWidth,
    pres: [...document.querySelectorAll("pre")].map((e) => ({
      text: e.textContent, right: box(e).right, scroll: e.scrollWidth, client: e.clientWidth,
      overflow: getComputedStyle(e).overflowX, wrap: getComputedStyle(e).whiteSpace,
    })),
    paragraphs: [...document.querySelectorAll("p")].filter((e) => !e.querySelector("img"))
      .map((e) => ({
        text: e.textContent.replace(/\\s+/g, " ").trim(), right: box(e).right,
        scroll: e.scrollWidth, client: e.clientWidth, lefts: lefts(e),
      })),
    images: [...document.images].map((e) => ({right: box(e).right, shown: e.naturalWidth > 0})),
  };
})())"""


#: Starts the browser with the pipe's two ends as its descriptors 3 and 4 (moved out of the
#: way first, in case either end is one of them already).
_ON_3_AND_4 = """import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 5) for fd in sys.argv[1:3]]
for wanted, end in zip((3, 4), ends):
    os.dup2(end, wanted)
os.execv(sys.argv[3], sys.argv[3:])
"""


class Phone:
    """Headless Chromium driven over the DevTools protocol (``--remote-debugging-pipe``: JSON
    messages ended by NUL, on the browser's descriptors 3 and 4), its page a phone."""

    def __init__(self) -> None:
        browser_reads, self._out = os.pipe()
        self._in, browser_writes = os.pipe()
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        flags += ["--force-device-scale-factor=1", "--remote-debugging-pipe", "about:blank"]
        self._process = subprocess.Popen(
            [sys.executable, "-c", _ON_3_AND_4, str(browser_reads), str(browser_writes)]
            + [str(BROWSER), *flags],
            pass_fds=(browser_reads, browser_writes),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(browser_reads)
        os.close(browser_writes)
        self._buffer = b""
        self._calls = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._calls += 1
        message: dict[str, Any] = {"id": self._calls, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._in], [], [], left)[0]:
                    raise TimeoutError(f"Chromium did not answer {method}")
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the pipe during {method}")
                self._buffer += chunk
            raw, _, self._buffer = self._buffer.partition(b"\0")
            answer = json.loads(raw)
            if answer.get("id") == self._calls:  # anything else is an event
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self._session, **params)

    def evaluate(self, expression: str) -> Any:
        return self.page("Runtime.evaluate", expression=expression, returnByValue=True)[
            "result"
        ].get("value")

    def show(self, html: Path) -> dict[str, Any]:
        """The page laid out at the phone's width: its measurements (see MEASURE)."""
        self._size(800)
        self.page("Page.navigate", url=html.as_uri())
        ready = "document.readyState === 'complete' && [...document.images].every(i => i.complete)"
        deadline = time.monotonic() + TIMEOUT
        while not self.evaluate(f"location.href === {json.dumps(html.as_uri())} && {ready}"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{html} did not load")
            time.sleep(0.05)
        return json.loads(self.evaluate(MEASURE))

    def screenshot(self, to: Path) -> None:
        """The page shown, as tall as it is, as a PNG at ``to``."""
        self._size(self.evaluate("document.documentElement.scrollHeight"))
        to.write_bytes(base64.b64decode(self.page("Page.captureScreenshot", format="png")["data"]))

    def _size(self, height: int) -> None:
        self.page(
            "Emulation.setDeviceMetricsOverride",
            width=PHONE,
            height=height,
            deviceScaleFactor=1,
            mobile=True,
        )

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        finally:
            os.close(self._out)
            os.close(self._in)
            try:
                self._process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


@pytest.fixture
def phone() -> Iterator[Phone]:
    opened = Phone()
    yield opened
    opened.close()


def saved(mail: Received, folder: Path) -> Path:
    """The mail's HTML part as a file, with the picture it names by cid: beside it."""
    folder.mkdir()
    parts = {p.get_content_type(): p for p in mail.message.walk()}
    cid = parts["image/png"]["Content-ID"].strip("<>")
    (folder / "board.png").write_bytes(parts["image/png"].get_content())
    html = parts["text/html"].get_content().replace(f"cid:{cid}", "board.png")
    (folder / "mail.html").write_text(html, encoding="utf-8")
    return folder / "mail.html"


def board_mails(
    server: RunningServer, engine: Engine, sink: Sink
) -> dict[str, tuple[Received, int]]:
    """A board mail of each game, and its board's number: the first player's right after the
    challenge; HMDG's, bob's as he must answer the 8th announcement."""
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    mails = {}
    for name in DIAGRAM:
        out = send(server, engine, sink, ALICE, f"{name} challenge alice bob")
        mail = next(m for m in out if m.to == ALICE and m.message["Reply-To"])
        found = re.search(r"board (\d+)", mail.subject)
        assert found is not None, mail.subject
        mails[name] = (mail, int(found[1]))
    board = mails["hmdg"][1]
    for sender, command in HMDG_MOVES:
        out = send(server, engine, sink, sender, command.format(b=board))
    mail = next(m for m in out if m.to == BOB and m.message["Reply-To"])
    assert "8. X plays in column 5" in mail.body, mail.body
    assert max(len(line) for line in mail.body.splitlines()) >= 90  # the long lines at issue
    mails["hmdg"] = (mail, board)
    return mails


def test_every_games_board_mail_fits_a_phone(
    server: RunningServer, engine: Engine, sink: Sink, phone: Phone, tmp_path: Path
) -> None:
    for name, (mail, board) in board_mails(server, engine, sink).items():
        html = saved(mail, tmp_path / name)
        page = phone.show(html)
        phone.screenshot(tmp_path / name / "phone.png")  # to look at
        said = f"{name} at {PHONE} px"
        # Nothing widens the page: not the picture, not a paragraph, not a diagram.
        assert page["width"] == PHONE, f"{said}: laid out {page['width']} px wide (viewport?)"
        assert page["scrollWidth"] <= PHONE, f"{said}: the page is {page['scrollWidth']} px wide"
        assert page["images"] and all(i["shown"] and i["right"] <= PHONE for i in page["images"])
        # Diagrams and command lines stay as they are, in boxes that scroll sideways.
        for pre in page["pres"]:
            assert pre["overflow"] in ("auto", "scroll") and pre["right"] <= PHONE, (said, pre)
            assert pre["wrap"] == "pre", f"{said}: a diagram is wrapped: {pre['text']!r}"
        pres = [pre["text"] for pre in page["pres"]]
        command = "hmdg reveal {b} bob PASSWORD" if name == "hmdg" else "{n} move {b} alice"
        for fixed in (DIAGRAM[name], command.format(n=name, b=board)):
            assert any(fixed in text for text in pres), f"{said}: {fixed!r} is not in a <pre>"
        # Prose is paragraphs that wrap within the width, never preformatted.
        for paragraph in page["paragraphs"]:
            fits = paragraph["right"] <= PHONE and paragraph["scroll"] <= paragraph["client"]
            assert fits, f"{said}: a paragraph is wider than the page: {paragraph['text']!r}"
        prose = ["It is your move: ", f", board {board}: alice ("]  # and the title line
        if name == "hmdg":
            prose += [f"{n}. {side} plays in" for n, side in enumerate("OXOXOXOX", start=1)]
        for words in prose:
            assert not any(words in text for text in pres), f"{said}: {words!r} is in a <pre>"
            found = [p for p in page["paragraphs"] if words in p["text"]]
            assert found, f"{said}: {words!r} is in no paragraph"
        if name == "hmdg":
            # An announcement that wraps keeps its hanging indent: the number sticks out.
            item = next(p for p in page["paragraphs"] if p["text"].startswith("1. O plays"))
            assert len(item["lefts"]) >= 2, f"{said}: {item['text']!r} does not wrap"
            first, *rest = item["lefts"]
            assert all(first < left for left in rest), f"{said}: no hanging indent: {item}"
