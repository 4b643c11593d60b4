"""Reading Buffalo moves as players write them: the piece's move and the ``dog:`` parts."""

from __future__ import annotations

import re

from pbmserv.games.base import IllegalMoveError
from pbmserv.games.buffalo.rules import LETTERS, ROWS, square

_SYNTAX = (
    "write the square a piece leaves and the square it reaches, like e7-e6 or f2xf3, "
    "or a buffalo's target alone, like e6"
)
# A square as players write it; checked against the board afterwards for a polite message.
_SQ = r"([a-z])\s*(\d{1,2})"
_MAIN_RE = re.compile(rf"{_SQ}(?:\s*(?:-|x|:|to)?\s*{_SQ})?")
_DOG_RE = re.compile(rf"dog\s*[:=]?\s*(?:{_SQ}\s*(?:>|->|-|to)\s*)?{_SQ}")
_DOG_WORD = re.compile(r"\bdog\b")
_LAST_RE = re.compile(r"[a-k][1-7][-x][a-k][1-7](?: dog:(?:[a-k][1-7]>)?[a-k]2)*")


# --- reading moves ---------------------------------------------------------------------------


def _square_of(letter: str, digits: str, shown: str) -> int:
    row = int(digits)
    if letter not in LETTERS or not 1 <= row <= ROWS:
        raise IllegalMoveError(
            f"{shown}: there is no square {letter}{digits} (columns a-k, rows 1-7)"
        )
    return square(LETTERS.index(letter), row)


def _split(text: str) -> tuple[str, list[re.Match[str]]] | None:
    """The piece move and the ``dog:`` parts of a lower-cased move text; None if a ``dog``
    word is there but not in the ``dog:b2`` / ``dog:d5>b2`` form."""
    start = _DOG_WORD.search(text)
    if start is None:
        return text.strip(), []
    main, rest = text[: start.start()].strip(), text[start.start() :]
    parts, pos = [], 0
    for match in _DOG_RE.finditer(rest):
        if rest[pos : match.start()].strip(" ,;"):
            break
        parts.append(match)
        pos = match.end()
    if rest[pos:].strip(" ,;") or not parts:
        return None
    return main, parts
