"""A board mail's HTML part, laid out for a phone: the text split on blank lines, prose in
paragraphs, diagrams, tables and command lines preformatted, list items with hanging indents,
every character of the text escaped, and none of it lost."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from pbmserv.outbound.compose import render, render_html
from pbmserv.outbound.html_layout import Block, is_fixed, layout

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="360" height="360"></svg>'

BOARD = """\
owlman board 17: your move

alice (White) played d3-c4.

      a b c d e f g h
   8  O # . # . # . #   8
   1  # . # H # H # K   1
      a b c d e f g h

K Doc   H helper   O Owlman   . open square   # tree
Helpers left: 12 of 12.
Nightfall: White has made 1 of 49 moves; the Owlman wins if White has not made it home
before nightfall, which comes after move 49.

Moves played: 1; last move: d3-c4
It is your move: as Owlman, move like a chess king. Reply with:
    owlman move 17 bob PASSWORD MOVE
(put your password for PASSWORD and your move for MOVE)

--
pbmserv at pbmserv@example.org. Send "help owlman" for the rules.
"""

ANNOUNCEMENTS = """\
Announcements:
  The opening x is on E5; the second player took O, and O moves first.
    1. O plays in row C (C3); X reveals nothing (answered at once): placed
       in secret.
    2. X plays in column 5; O reveals nothing: placed in secret.
"""


class Elements(HTMLParser):
    """The text of each <p> and <pre> of a page (a <br> read as a line break), in order; and
    every kind of tag the page has."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.tags: set[str] = set()
        self._open: str | None = None
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.add(tag)
        if tag in ("p", "pre"):
            self._open = tag
            self.found.append((tag, ""))
        elif tag == "br" and self._open:
            self.found[-1] = (self._open, self.found[-1][1] + "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self.found[-1] = (self._open, self.found[-1][1] + data)


def elements(text: str) -> list[tuple[str, str]]:
    page = render_html("owlman board 17: your move", text, [("board.1@example.org", SVG)])
    return [(tag, words) for tag, words in Elements(page).found if words]


def test_prose_becomes_paragraphs_and_a_diagram_stays_preformatted() -> None:
    found = elements(BOARD)
    pre = [words for tag, words in found if tag == "pre"]
    prose = [words for tag, words in found if tag == "p"]
    diagram = "\n".join(BOARD.splitlines()[4:8])
    assert diagram in pre  # whole, its spacing kept
    assert "K Doc   H helper   O Owlman   . open square   # tree" in pre  # aligned: a table
    assert "    owlman move 17 bob PASSWORD MOVE" in pre  # an indented command line
    # A line a wrapper broke runs on; a line of its own (a sentence's end, a capital) stays so.
    assert (
        "Helpers left: 12 of 12.\nNightfall: White has made 1 of 49 moves; the Owlman wins if "
        "White has not made it home before nightfall, which comes after move 49."
    ) in prose
    assert (
        "Moves played: 1; last move: d3-c4\n"
        "It is your move: as Owlman, move like a chess king. Reply with:"
    ) in prose
    assert "(put your password for PASSWORD and your move for MOVE)" in prose
    assert not any("It is your move" in words or "Helpers" in words for words in pre)


def test_nothing_of_the_text_is_lost() -> None:
    text = f"{BOARD}\n{ANNOUNCEMENTS}".split()
    shown = " ".join(words for _, words in elements(f"{BOARD}\n{ANNOUNCEMENTS}")).split()
    # The text, whole; then, below, the note on the picture.
    assert shown[: len(text)] == text
    assert " ".join(shown[len(text) :]).endswith("set USERID PASSWORD mail=text")


def test_an_announcement_keeps_its_hanging_indent() -> None:
    (paragraph,) = layout(ANNOUNCEMENTS)
    assert paragraph == (
        Block("p", ("Announcements:",)),
        Block("p", ("The opening x is on E5; the second player took O, and O moves first.",), 2),
        Block(
            "p",
            ("1. O plays in row C (C3); X reveals nothing (answered at once): placed in secret.",),
            indent=7,
            hang=3,
        ),
        Block("p", ("2. X plays in column 5; O reveals nothing: placed in secret.",), 7, 3),
    )
    page = render_html("hmdg board 1", ANNOUNCEMENTS, [("board.1@example.org", SVG)])
    # A margin, not a padding: Outlook on Windows ignores a paragraph's padding.
    assert '<p style="margin:0;margin-left:3.5em;text-indent:-1.5em">1. O plays' in page


def test_paragraphs_are_split_on_blank_lines() -> None:
    text = "First paragraph.\n\n\n   \nSecond paragraph.\n"
    assert layout(text) == [
        (Block("p", ("First paragraph.",)),),
        (Block("p", ("Second paragraph.",)),),
    ]


def test_what_counts_as_a_diagram_or_table() -> None:
    fixed = ["  A  . . . . x . . . .  A", "     1 2 3 4 5 6 7 8 9", "      ---------------"]
    fixed += [" White (capitals)     1  1  2  2  2  8   -", "\u250c\u2500\u2510"]
    prose = ["Pieces: X 4 (3 revealed), O 3 (1 revealed).", "Two spaces.  After a stop."]
    prose += ["Wait for it...", "    1. O plays in row C; X reveals nothing."]
    assert all(is_fixed(line) for line in fixed)
    assert not any(is_fixed(line) for line in prose)


def test_html_in_a_chat_text_is_escaped() -> None:
    said = '<script>alert("hi")</script> & <b>bold</b> <img src=x onerror=alert(1)>'
    chat = render(
        "mail/chat.txt.j2",
        {"from": "mallory", "game": "owlman", "board": 17, "text": said, "server_address": "x@y"},
    )
    aligned = f"    {said}      <i>in a table</i>"  # preformatted, escaped all the same
    page = render_html(f"owlman board 17: {said}", chat + "\n" + aligned + "\n", [])
    assert "<script" not in page and "<b>" not in page and "<img src=x" not in page
    assert "<i>" not in page
    assert html.escape(said, quote=False) in page.replace("&#34;", '"')
    found = Elements(page)
    tags = {"html", "head", "meta", "title", "style", "body", "div", "p", "pre", "br"}
    assert found.tags <= tags  # the style is the template's own (Apple Mail's data detectors)
    shown = [words for _, words in found.found]
    assert any(said in words for words in shown)  # as the player wrote it, to the reader


def test_a_picture_has_a_note_on_how_to_have_the_text_alone() -> None:
    text = "owlman board 17: waiting for bob\n"
    page = render_html("owlman board 17", text, [("board.1@example.org", SVG)], "pbm@games.test")
    assert "send this line to pbm@games.test:" in page
    assert "set USERID PASSWORD mail=text</pre>" in page
    assert "mail=text" not in render_html("owlman board 17", text, [], "pbm@games.test")
