"""Reading Entropy moves as players write them: placements, slides, passes, gifts and stockings."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from pbmserv.games.base import (
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidMoveError,
)
from pbmserv.games.entropy.prompts import (
    _task,
    _wrong_kind,
)
from pbmserv.games.entropy.rules import (
    _present,
    _slide_problem,
    _stock_problem,
)
from pbmserv.games.entropy.state import (
    _CODE_OF,
    _COLUMNS,
    _EXAMPLE_STOCK,
    COLOURS,
    PLACE,
    RESERVE_SIZE,
    SLIDE,
    STANDARD,
    STOCK,
    Pass,
    Place,
    Slide,
    Stock,
    _letter,
    _named,
    _spaced,
    _tally,
    square_name,
)

if TYPE_CHECKING:
    from pbmserv.games.entropy.state import EntropyState

# --- notation ---------------------------------------------------------------------------------

# Matched against the lower-cased text with runs of white space made single spaces.
_COLOUR = r"(red|green|blue|yellow|pink|white|black|[rgbypwk])"
_SQUARE = r"([a-z])(\d+)"
_PLACE_RE: Final = re.compile(rf"(?:{_COLOUR}[ :=-]*)?{_SQUARE}(?:[ :=-]*{_COLOUR})?", re.ASCII)
_ORDER_RE: Final = re.compile(
    rf"(?:{_SQUARE} ?(?:-|to|x|:)? ?{_SQUARE}|(pass))(?:[ ,;]*(?:give|hand)?[ :=-]*{_COLOUR})?",
    re.ASCII,
)
# "stock" may come twice: "entropy stock 2 alice PASSWORD stock RGBYP".
_STOCK_RE: Final = re.compile(rf"(?:(stock)[ :=-]*)*((?:{_COLOUR}[ ,]*)+)", re.ASCII)
_COLOUR_RE: Final = re.compile(_COLOUR, re.ASCII)
_CANONICAL_PLACE_RE: Final = re.compile(r"([a-g])([1-7]) ([A-Z])")
_CANONICAL_ORDER_RE: Final = re.compile(r"(?:([a-g])([1-7])-([a-g])([1-7])|pass)(?: give ([A-Z]))?")


def _quote(text: str) -> str:
    return f'"{text}"'


class _Reader:
    """Turns the player's words into cells and colours, or raises errors quoting them."""

    def __init__(self, state: EntropyState, shown: str) -> None:
        self.state = state
        self.shown = shown

    def cell(self, letter: str, digits: str) -> int:
        size = self.state.size
        col = ord(letter) - ord("a")
        significant = digits.lstrip("0")
        row = int(significant) - 1 if significant and len(significant) <= 2 else -1
        if not (col < size and 0 <= row < size):
            raise IllegalMoveError(
                f"{self.shown}: there is no square {letter}{digits} on a {size}x{size} board "
                f"(columns a-{_COLUMNS[size - 1]}, rows 1-{size})"
            )
        return row * size + col

    def colour(self, word: str) -> int:
        code = _CODE_OF[word]
        if code > self.state.size:
            in_play = ", ".join(f"{n} ({letter})" for letter, n in COLOURS[: self.state.size])
            raise IllegalMoveError(
                f"{self.shown}: there is no {COLOURS[code - 1][1]} on a {self.state.size}x"
                f"{self.state.size} board; its colours are {in_play}"
            )
        return code


# --- reading moves ---------------------------------------------------------------------------


def _read_stock(state: EntropyState, reader: _Reader, match: re.Match[str]) -> Stock:
    shown = reader.shown
    if state.variant == STANDARD:
        raise IllegalMoveError(
            f"{shown}: standard Entropy has no reserve to stock; the counters come from the bag"
        )
    if state.stage != STOCK:
        raise IllegalMoveError(
            f"{shown}: the reserve is stocked only at the start of a round; {_task(state)}"
        )
    counts = [0] * state.size
    for word in _COLOUR_RE.findall(match.group(2)):
        counts[reader.colour(word) - 1] += 1
    if sum(counts) != RESERVE_SIZE:
        raise IllegalMoveError(
            f"{shown}: choose exactly {RESERVE_SIZE} counters for the reserve, like "
            f"{_EXAMPLE_STOCK}; you named {sum(counts)}"
        )
    problem = _stock_problem(state, tuple(counts))
    if problem:
        raise IllegalMoveError(f"{shown}: {problem}")
    return Stock(tuple(counts))


def _read_place(state: EntropyState, reader: _Reader, match: re.Match[str]) -> Place:
    shown = reader.shown
    before, letter, digits, after = match.groups()
    if state.stage != PLACE:
        raise _wrong_kind(state, shown)
    cell = reader.cell(letter, digits)
    name = square_name(cell, state.size)
    if before and after:
        raise InvalidMoveError(f"{shown} names two colours: write one, like {name} R")
    said = reader.colour(before or after) if (before or after) else 0
    if state.colour_at(cell):
        raise IllegalMoveError(
            f"{shown}: {name} already holds a {_named(state.colour_at(cell))} counter; "
            "place on an empty square"
        )
    if state.variant == STANDARD:
        if said and said != state.drawn:
            raise IllegalMoveError(
                f"{shown}: the counter drawn for you is {_named(state.drawn)}, not "
                f"{COLOURS[said - 1][1]}; write {name} or {name} {_letter(state.drawn)}"
            )
        return Place(cell, state.drawn)
    held = _present(state.reserve)
    if not said:
        if len(held) > 1:
            raise AmbiguousMoveError(
                f"{shown}: say which counter of your reserve ({_spaced(state.reserve)}) to "
                f"place, like {name} {_letter(held[0])}"
            )
        said = held[0]
    if not state.reserve[said - 1]:
        raise IllegalMoveError(
            f"{shown}: your reserve holds no {COLOURS[said - 1][1]} counter; it holds "
            f"{_spaced(state.reserve)}"
        )
    return Place(cell, said)


def _read_order(state: EntropyState, reader: _Reader, match: re.Match[str]) -> Slide | Pass:
    shown = reader.shown
    src_letter, src_digits, dst_letter, dst_digits, is_pass, give_word = match.groups()
    if state.stage != SLIDE:
        raise _wrong_kind(state, shown)
    if is_pass:
        return Pass(_read_give(state, reader, give_word, "pass"))
    src, dst = reader.cell(src_letter, src_digits), reader.cell(dst_letter, dst_digits)
    problem = _slide_problem(state, src, dst)
    if problem:
        raise IllegalMoveError(f"{shown}: {problem}")
    slide = f"{square_name(src, state.size)}-{square_name(dst, state.size)}"
    return Slide(src, dst, _read_give(state, reader, give_word, slide))


def _read_give(state: EntropyState, reader: _Reader, word: str | None, move: str) -> int:
    """The colour Order hands over with ``move`` (0 for none), checked against the supply."""
    shown = reader.shown
    if state.variant == STANDARD:
        if word:
            raise IllegalMoveError(
                f"{shown}: in standard Entropy Chaos draws from the bag; Order hands nothing over"
            )
        return 0
    supply = state.supply()
    left = _present(supply)
    if not word:
        if len(left) > 1:
            raise AmbiguousMoveError(
                f"{shown}: also hand Chaos a counter from the supply ({_tally(supply)}), "
                f"like {move} give {_letter(left[0])}"
            )
        return left[0] if left else 0
    give = reader.colour(word)
    if not left:
        raise IllegalMoveError(f"{shown}: the supply is empty, so there is nothing to give")
    if not supply[give - 1]:
        raise IllegalMoveError(
            f"{shown}: the supply has no {COLOURS[give - 1][1]} counter left ({_tally(supply)})"
        )
    return give
