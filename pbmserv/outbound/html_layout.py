"""A plain text mail body laid out for the HTML part of a board mail, to be read on a phone.

The text is split on blank lines into paragraphs. Within one, prose becomes paragraphs the
reader's screen wraps (lines that a template or ``textwrap`` broke are joined again; a line
that ends a sentence keeps its break), a list item or an indented line keeps its indent (a
hanging one when its continuation lines are indented deeper), and the lines that only make
sense as they are (board diagrams, tables aligned with runs of spaces, indented command lines
like ``    owlman move 17 USERID PASSWORD MOVE``) stay preformatted, to be scrolled sideways in
their own box rather than wrapped. The result is plain strings: the template escapes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

#: Aligned columns: three spaces or more between words, or two not after a sentence's end
#: (two spaces after a full stop are a typist's habit, not a table).
_ALIGNED = re.compile(r"\S {3,}\S|[^\s.!?] {2}\S")
#: Drawn lines: ``---``, ``~~~``, ``===``, ``|||`` ... or box-drawing characters.
_DRAWN = re.compile(r"([-=~_#+|])\1\1|[\u2500-\u259f]")
#: A list item's marker: ``1.``, ``12)``, ``-``, ``*``, ``•``.
_MARKER = re.compile(r"(?:\d{1,3}[.)]|[-*\u2022]) +(?=\S)")
#: The end of a sentence (or of a line leading into what follows), closing marks after it;
#: not an ellipsis, as in ``[POINT ...]``.
_FINAL = re.compile(r"(?<!\.)[.!?:][)\]\"'\u201d\u2019]*$")
_SIGNATURE = "--"  # the signature separator ("-- "), a line of its own


@dataclass(frozen=True)
class Block:
    """A piece of a paragraph: ``kind`` "pre" (``lines`` kept as they are) or "p" (prose:
    each of ``lines`` starts a new line, and wraps on the screen). A "p" is set ``indent``
    characters in, its first line ``hang`` characters to the left of the others."""

    kind: Literal["p", "pre"]
    lines: tuple[str, ...]
    indent: int = 0
    hang: int = 0


def layout(text: str) -> list[tuple[Block, ...]]:
    """The paragraphs of ``text`` (split on blank lines), each as its blocks."""
    paragraphs: list[list[str]] = [[]]
    for line in text.expandtabs().splitlines():
        line = line.rstrip()
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [_blocks(lines) for lines in paragraphs if lines]


def is_fixed(line: str) -> bool:
    """Whether a line is part of a diagram or a table: it must keep its spacing."""
    words = line.split()
    return bool(
        _ALIGNED.search(line)
        or _DRAWN.search(line)
        or (len(words) >= 3 and all(len(word) <= 2 for word in words))
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@dataclass
class _Item:
    """Prose being gathered: its first line's indent and marker, its continuation indent."""

    first: int
    marker: int
    lines: list[str]
    deeper: int | None = None  # the indent of continuation lines, once one is seen

    def block(self) -> Block:
        indent = self.deeper if self.deeper is not None else self.first + self.marker
        return Block("p", tuple(self.lines), indent=indent, hang=indent - self.first)

    def add(self, line: str) -> None:
        """A line of this prose: run on from the one before, as a wrapper broke it, unless
        that one ended a sentence or this one starts with a capital (a line of its own)."""
        last = self.lines[-1]
        if not _FINAL.search(last) and last != _SIGNATURE and not line[:1].isupper():
            self.lines[-1] = f"{last} {line.strip()}"
        else:
            self.lines.append(line.strip())


def _blocks(lines: list[str]) -> tuple[Block, ...]:
    blocks: list[Block] = []
    fixed: list[str] = []
    item: _Item | None = None

    def close_item() -> None:
        nonlocal item
        if item is not None:
            blocks.append(item.block())
            item = None

    def close_fixed() -> None:
        if fixed:
            blocks.append(Block("pre", tuple(fixed)))
            fixed.clear()

    for line in lines:
        indent = _indent(line)
        if is_fixed(line):
            close_item()
            fixed.append(line)
        elif (
            item is not None
            and indent > item.first
            and (item.first or item.marker)
            and not _MARKER.match(line, indent)
        ):
            # A continuation: deeper than an indented line or a list item's first line.
            if item.deeper is None:
                item.deeper = indent
            item.lines[-1] = f"{item.lines[-1]} {line.strip()}"
        elif item is not None and indent == 0 == item.first and not item.marker:
            item.add(line)
        else:
            marker = _MARKER.match(line, indent)
            if indent and marker is None and not _FINAL.search(line):
                close_item()  # an indented line that is no sentence: a command, say
                fixed.append(line)
                continue
            close_item()
            close_fixed()
            width = marker.end() - indent if marker is not None else 0
            item = _Item(indent, width, [line.strip()])
    close_item()
    close_fixed()
    return tuple(blocks)
