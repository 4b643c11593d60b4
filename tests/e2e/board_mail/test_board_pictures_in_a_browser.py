"""Board mail looked at as a person would: its HTML part, with the picture it names by cid:,
rendered by headless Chromium (Debian's ``chromium``); the screenshot must show the board: the
attached picture where the HTML puts it, and known cells in their colours, for every game.

CI installs Chromium (.ci/run) and this test fails there without it; elsewhere it is skipped
when no browser is installed.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from pbmserv.games.drawing import CELL, LIGHT, RIVER, Grid, hex_centre, square_centre
from tests.support import Received, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
PADDING = 12  # the HTML body's padding: where the picture starts

if BROWSER is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("CI needs Chromium for the picture tests (.ci/run installs it)")
    pytest.skip("no Chromium here to look at the mail with", allow_module_level=True)


def _grid(rows: int, cols: int, rivers: frozenset[int] = frozenset()) -> Grid:
    return Grid(rows, cols, {}, [], [], rivers_below=rivers)


def _chess_square(file: int, rank: int) -> tuple[float, float]:
    """python-chess's board at size 360: a 390-unit viewBox, 15 units of margin."""
    scale = 360 / 390
    return (15 + file * 45 + 22.5) * scale, (15 + (7 - rank) * 45 + 22.5) * scale


#: For each game, right after the challenge: (a place in the picture, the colour there).
KNOWN = {
    "buffalo": [
        (square_centre(_grid(7, 11, frozenset({0, 5})), 0, 0), "#222222", -CELL * 0.25),  # a7
        (square_centre(_grid(7, 11, frozenset({0, 5})), 3, 5), LIGHT, 0),  # f4, empty
        ((60, square_centre(_grid(7, 11, frozenset({0, 5})), 0, 0)[1] + CELL * 0.75), RIVER, 0),
    ],
    "owlman": [
        (square_centre(_grid(8, 8), 7, 0), "#3f7d3a", 0),  # a1: a tree
        (square_centre(_grid(8, 8), 4, 2), LIGHT, 0),  # c4: open
        (square_centre(_grid(8, 8), 4, 4), "#ffffff", -CELL * 0.25),  # e4: a helper
    ],
    "chameleon": [(hex_centre(_grid(11, 11), 5, 5), LIGHT, 0)],
    "entropy": [(square_centre(_grid(5, 5), 2, 2), LIGHT, 0)],
    "hmdg": [(square_centre(_grid(9, 9), 4, 4), LIGHT, 0)],
    "extinction": [(_chess_square(4, 3), "#ffce9e", 0), (_chess_square(3, 3), "#d18b47", 0)],
}


def send(server, engine, sink: Sink, sender: str, subject: str) -> list[Received]:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(sender, subject))[0] == 250
    settle(engine)
    return sink.messages[before:]


def screenshot(mail: Received, folder: Path) -> tuple[Image.Image, Image.Image]:
    """The mail's HTML as a mail program shows it (cid: resolved to the attached picture),
    rendered by Chromium; and the attached picture itself."""
    parts = {p.get_content_type(): p for p in mail.message.walk()}
    png = parts["image/png"].get_content()
    cid = parts["image/png"]["Content-ID"].strip("<>")
    (folder / "board.png").write_bytes(png)
    html = parts["text/html"].get_content().replace(f"cid:{cid}", "board.png")
    (folder / "mail.html").write_text(html, encoding="utf-8")
    shot = folder / "shot.png"
    subprocess.run(
        [
            str(BROWSER),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=900,1400",
            f"--screenshot={shot}",
            (folder / "mail.html").as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return Image.open(shot).convert("RGB"), Image.open(io.BytesIO(png)).convert("RGB")


def near(found: tuple[int, ...], wanted: str, tolerance: int = 30) -> bool:
    colour = tuple(int(wanted[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(found, colour, strict=True))


def test_every_games_board_mail_shows_its_board_in_a_browser(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, tmp_path: Path
) -> None:
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    for name, checks in KNOWN.items():
        out = send(server, engine, sink, ALICE, f"{name} challenge alice bob")
        mail = next(m for m in out if m.to == ALICE and m.message["Reply-To"])
        folder = tmp_path / name
        folder.mkdir()
        shot, picture = screenshot(mail, folder)
        # The picture is shown at full size where the HTML puts it ...
        shown = shot.crop((PADDING, PADDING, PADDING + picture.width, PADDING + picture.height))
        difference = ImageStat.Stat(ImageChops.difference(shown, picture)).mean
        assert max(difference) < 3, f"{name}: the browser does not show the attached picture"
        # ... and it is the board: known cells in their colours.
        for (x, y), colour, shift in checks:
            pixel = shot.getpixel((round(PADDING + x + shift), round(PADDING + y)))
            assert near(pixel, colour), f"{name}: at ({x:.0f}, {y:.0f}) {pixel} is not {colour}"
        # Below it, the text of the mail, whole.
        assert mail.body.strip().splitlines()[0] in (folder / "mail.html").read_text()
