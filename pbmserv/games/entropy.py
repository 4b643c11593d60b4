"""Entropy (Eric Solomon, 1977) and its deterministic variant Entropy II (Luca Cerrato).

Two roles: Chaos places counters, Order slides them like rooks to build palindromes in the rows
and columns (scored by :mod:`pbmserv.games.entropy_score`). A game is two rounds with the roles
exchanged; the higher score as Order wins. Sizes: 7x7 with 7 colours x 7 counters, or 5x5
(Hyle) with 5 x 5.

Standard Entropy draws every counter from a bag with the generator the server passes in: the
first in ``new_game``, the next one in the ``apply`` of the Order move before it (so Order moves
without knowing it) and the first of round 2 in the ``apply`` of round 1's last placement. The
drawn colour is part of the state and of Chaos's move text (``c3 R``), so a replay is exact.

Under ``-variant=entropy2`` there is no bag: a round opens with Order stocking Chaos's reserve
with 5 counters (``stock RRGBY``), Chaos places one of its choice (``c3 R``), and every Order
move hands one more over while the supply lasts (``c3-c6 give R``, ``pass give R``).

Seats: the first-named player (seat 0) makes the first move of the game, as everywhere on the
server. In standard Entropy that is Chaos's placement, so seat 0 is Chaos in round 1; under
``entropy2`` a round opens with Order's stocking, so seat 0 is Order in round 1. The roles swap
for round 2.

Squares are named like chess squares: columns ``a..`` from the left, rows ``1..`` from the
bottom. A board is stored as ``bytes``, one colour code per square (0 empty), row 1 first.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Final, NamedTuple

from pbmserv.games.base import (
    AmbiguousMoveError,
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    MoveKind,
    OptionError,
    OptionSpec,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)
from pbmserv.games.entropy_score import BoardScore, board_score

CHAOS: Final = "Chaos"
ORDER: Final = "Order"

STANDARD: Final = "standard"
ENTROPY2: Final = "entropy2"
SIZES: Final = (5, 7)
DEFAULT_SIZE: Final = 7
RESERVE_SIZE: Final = 5  # Entropy II: Chaos's reserve is stocked with, and holds at most, 5
_EXAMPLE_STOCK: Final = "stock RGBYP"  # one of each of the first five colours: always possible

# Stages (Turn.stage); "stock" is also a kind of move (see MoveKind).
PLACE: Final = "place"
SLIDE: Final = "slide"
STOCK: Final = "stock"
OVER: Final = "over"

#: Colour letters and names; colour code k (1-based) is entry k - 1. A 5x5 board uses the first
#: five. The seed's set has blue, brown and black; brown became white so each letter is unique.
COLOURS: Final = (
    ("R", "red"),
    ("G", "green"),
    ("B", "blue"),
    ("Y", "yellow"),
    ("P", "pink"),
    ("W", "white"),
    ("K", "black"),
)
_LETTERS: Final = "".join(letter for letter, _ in COLOURS)
_CODE_OF: Final = {
    **{letter.lower(): k + 1 for k, (letter, _) in enumerate(COLOURS)},
    **{name: k + 1 for k, (_, name) in enumerate(COLOURS)},
}
_COLUMNS: Final = "abcdefg"


# --- moves -----------------------------------------------------------------------------------


class Place(NamedTuple):
    """Chaos puts a counter of colour ``colour`` (1-based code) on the empty square ``cell``."""

    cell: int
    colour: int


class Slide(NamedTuple):
    """Order slides the counter on ``src`` to ``dst``; under entropy2 it then hands Chaos a
    counter of colour ``give`` (0: nothing, once the supply is empty)."""

    src: int
    dst: int
    give: int = 0


class Pass(NamedTuple):
    """Order leaves the board as it is (and under entropy2 hands over ``give``)."""

    give: int = 0


class Stock(NamedTuple):
    """Entropy II: Order puts these counters in Chaos's empty reserve; ``counts[k]`` is the number
    of colour ``k + 1``."""

    counts: tuple[int, ...]


EntropyMove = Place | Slide | Pass | Stock


# --- the state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntropyState:
    """One position; never changed once made (``apply`` builds a new one).

    ``cells`` is the board of the round in play (after the game, round 2's last board) and
    ``first`` round 1's final board once round 2 has begun. ``drawn`` is the colour drawn for
    Chaos to place (standard Entropy, Chaos's turn; else 0). ``reserve`` counts Chaos's counters
    per colour (entropy2; all 0 in standard Entropy).
    """

    size: int
    variant: str
    round: int
    stage: str
    cells: bytes
    reserve: tuple[int, ...]
    drawn: int = 0
    first: bytes | None = None
    ply: int = 0
    last_move: str | None = None
    result: Outcome | None = None

    @property
    def chaos_seat(self) -> int:
        """Seat 0 is Chaos in round 1 of standard Entropy and in round 2 of Entropy II."""
        return 0 if (self.round == 1) == (self.variant == STANDARD) else 1

    @property
    def order_seat(self) -> int:
        """The seat playing Order in the round in play."""
        return 1 - self.chaos_seat

    def role(self, seat: int) -> str:
        """The role of ``seat`` in the round in play: "Chaos" or "Order"."""
        return CHAOS if seat == self.chaos_seat else ORDER

    @property
    def mover(self) -> int | None:
        """The seat to act, or None once the game is over."""
        if self.stage == OVER:
            return None
        return self.chaos_seat if self.stage == PLACE else self.order_seat

    def colour_at(self, cell: int) -> int:
        """The colour code on ``cell`` (0: empty)."""
        return self.cells[cell]

    def bag(self) -> tuple[int, ...]:
        """Standard Entropy: the counters per colour still in the bag (the drawn one is out)."""
        cells, drawn = self.cells, self.drawn
        return tuple(self.size - cells.count(c) - (c == drawn) for c in range(1, self.size + 1))

    def supply(self) -> tuple[int, ...]:
        """Entropy II: the counters per colour that Order has not yet handed over."""
        cells, reserve = self.cells, self.reserve
        return tuple(self.size - cells.count(c) - reserve[c - 1] for c in range(1, self.size + 1))


# --- squares and geometry --------------------------------------------------------------------


def square_name(cell: int, size: int) -> str:
    """``c3`` style name of a cell index (row 1 at the bottom)."""
    row, col = divmod(cell, size)
    return f"{_COLUMNS[col]}{row + 1}"


@cache
def _rays(size: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each cell, the cells outward along its row and column in the four directions."""
    rays = []
    for cell in range(size * size):
        row, col = divmod(cell, size)
        rays.append(
            (
                tuple(r * size + col for r in range(row + 1, size)),
                tuple(r * size + col for r in range(row - 1, -1, -1)),
                tuple(row * size + c for c in range(col + 1, size)),
                tuple(row * size + c for c in range(col - 1, -1, -1)),
            )
        )
    return tuple(rays)


@cache
def _centre_first(size: int) -> tuple[int, ...]:
    """All cells, nearest the centre first: where the examples in prompts are taken from."""
    mid = (size - 1) / 2
    return tuple(
        sorted(range(size * size), key=lambda i: (abs(i // size - mid) + abs(i % size - mid), i))
    )


def _slides(cells: bytes, size: int) -> Iterator[tuple[int, int]]:
    """Every rook slide over empty squares to an empty square."""
    rays = _rays(size)
    for src, colour in enumerate(cells):
        if colour:
            for ray in rays[src]:
                for dst in ray:
                    if cells[dst]:
                        break
                    yield src, dst


def _letter(colour: int) -> str:
    return COLOURS[colour - 1][0]


def _named(colour: int) -> str:
    letter, name = COLOURS[colour - 1]
    return f"{name} ({letter})"


def _letters(counts: tuple[int, ...]) -> str:
    """``RRGY`` for two red, one green, one yellow: colours in the order of COLOURS."""
    return "".join(_letter(c + 1) * n for c, n in enumerate(counts))


def _spaced(counts: tuple[int, ...]) -> str:
    """``R R G Y``: the counters one by one, for diagrams and prompts."""
    return " ".join(_letters(counts))


def _tally(counts: tuple[int, ...]) -> str:
    """``R 4, G 3, B 5``: every colour of the set with its count."""
    return ", ".join(f"{_letter(c + 1)} {n}" for c, n in enumerate(counts))


def _draw(counts: tuple[int, ...], rng: random.Random) -> int:
    """One counter drawn at random from a bag holding ``counts``; its colour code."""
    pick = rng.randrange(sum(counts))
    for index, count in enumerate(counts):
        if pick < count:
            return index + 1
        pick -= count
    raise AssertionError("unreachable: pick < sum(counts)")


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


# --- the game --------------------------------------------------------------------------------


class Entropy(Game):
    """Entropy and Entropy II on 5x5 or 7x7; see the module docstring for the seats."""

    SPEC = GameSpec(
        name="entropy",
        title="Entropy",
        seat_names=(CHAOS, ORDER),
        uses_chance=True,
        options=(
            OptionSpec(
                name="size",
                type=int,
                default=DEFAULT_SIZE,
                help="7: 7x7 board, 7 colours x 7 counters; 5: 5x5 (Hyle), 5 colours x 5",
                choices=tuple(SIZES),
            ),
            OptionSpec(
                name="variant",
                type=str,
                default=STANDARD,
                help="standard: counters drawn from a bag; entropy2: Order hands them to Chaos",
                choices=(STANDARD, ENTROPY2),
            ),
        ),
        move_kinds=(
            MoveKind(
                name=STOCK,
                takes="COLOURS",
                summary="Entropy II: as Order, stock Chaos's reserve with 5 counters, like RRGBY",
            ),
        ),
    )

    # --- setting up -------------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> EntropyState:
        """An empty board; standard Entropy draws Chaos's first counter from ``rng``."""
        size = _option_size(options.get("size", DEFAULT_SIZE))
        variant = options.get("variant", STANDARD)
        if variant not in (STANDARD, ENTROPY2):
            raise OptionError(f"-variant={variant}: choose one of {STANDARD}, {ENTROPY2}")
        return _round_start(size, variant, 1, rng, None)

    # --- whose turn -------------------------------------------------------------------------

    def to_move(self, state: EntropyState) -> Turn:
        """One seat acts at a time; the stage says what it does (place, slide or stock)."""
        seat = state.mover
        if seat is None:
            return Turn(seats=frozenset(), stage=OVER)
        return Turn(seats=frozenset({seat}), stage=state.stage, prompts={seat: _task(state)})

    def seat_name(self, state: EntropyState, seat: int) -> str:
        """The seat's role in the round in play (after the game: its round-2 role)."""
        return state.role(seat)

    # --- moves ------------------------------------------------------------------------------

    def parse_move(self, state: EntropyState, seat: int, text: str) -> EntropyMove:
        """Read ``c3``, ``c3 R``, ``c3-c6``, ``pass``, ``c3-c6 give R``, ``stock RRGBY`` and
        their variants; raise a MoveError that quotes ``text``."""
        raw = text.strip()
        shown = _quote(raw)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        if seat != state.mover:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {state.role(1 - seat)} is to move"
            )
        words = " ".join(raw.lower().split())
        reader = _Reader(state, shown)
        stock = _STOCK_RE.fullmatch(words)
        if stock and (stock.group(1) or state.stage == STOCK):
            return _read_stock(state, reader, stock)
        place = _PLACE_RE.fullmatch(words)
        if place:
            return _read_place(state, reader, place)
        order = _ORDER_RE.fullmatch(words)
        if order:
            return _read_order(state, reader, order)
        raise InvalidMoveError(f"{shown} is not an Entropy move: {_task(state)}")

    def format_move(self, state: EntropyState, move: EntropyMove) -> str:
        """``c3 R``, ``c3-c6``, ``pass``, ``c3-c6 give R``, ``pass give R``, ``stock RRGBY``."""
        size = state.size
        if isinstance(move, Place):
            return f"{square_name(move.cell, size)} {_letter(move.colour)}"
        if isinstance(move, Stock):
            return f"stock {_letters(move.counts)}"
        if isinstance(move, Slide):
            text = f"{square_name(move.src, size)}-{square_name(move.dst, size)}"
        else:
            text = "pass"
        return f"{text} give {_letter(move.give)}" if move.give else text

    def legal_moves(self, state: EntropyState, seat: int) -> list[EntropyMove]:
        """Every move of ``seat`` now: placements, slides and passes (each with every colour it
        may hand over), or every choice of 5 counters for the reserve."""
        if seat != state.mover:
            return []
        if state.stage == PLACE:
            colours = [state.drawn] if state.variant == STANDARD else _present(state.reserve)
            empty = [i for i, c in enumerate(state.cells) if not c]
            return [Place(cell, colour) for cell in empty for colour in colours]
        if state.stage == STOCK:
            return [Stock(counts) for counts in _stockings(state.supply(), RESERVE_SIZE)]
        gives = _present(state.supply()) if state.variant == ENTROPY2 else []
        gives = gives or [0]
        moves: list[EntropyMove] = [Pass(give) for give in gives]
        for src, dst in _slides(state.cells, state.size):
            moves.extend(Slide(src, dst, give) for give in gives)
        return moves

    def apply(self, state: EntropyState, move: EntropyMove, rng: random.Random) -> EntropyState:
        """The position after ``move``; standard Entropy draws the next counter from ``rng``."""
        if state.result is not None:
            raise IllegalMoveError("the game is over")
        problem = _problem(state, move)
        if problem:
            raise IllegalMoveError(f"{_quote(self.format_move(state, move))}: {problem}")
        text = self.format_move(state, move)
        if isinstance(move, Place):
            return _after_place(state, move, rng, text)
        if isinstance(move, Stock):
            return replace(
                state, stage=PLACE, reserve=move.counts, ply=state.ply + 1, last_move=text
            )
        return _after_order(state, move, rng, text)

    def chance_outcome(self, state: EntropyState) -> dict[str, Any] | None:
        """The counter drawn from the bag for Chaos (standard Entropy); the board shows it to
        everyone, so it is no secret."""
        return {"drawn": _letter(state.drawn)} if state.drawn else None

    def outcome(self, state: EntropyState) -> Outcome | None:
        """Set when round 2's board is full; scores are each seat's total as Order."""
        return state.result

    # --- the diagram ------------------------------------------------------------------------

    def render(self, state: EntropyState, viewer: Viewer) -> str:
        """The board with the score of every row and column, the colours left and, at the end,
        both rounds' boards; every viewer sees the same (nothing is hidden)."""
        del viewer
        if state.stage == OVER:
            return _render_final(state)
        lines = []
        if state.round == 1:
            lines.append("Round 1 of 2 (the players swap roles for round 2).")
        else:
            assert state.first is not None
            if not any(state.cells):  # round 1 has just ended: its full board is news
                lines += ["Round 1 is over: the last counter has filled the board.", ""]
                lines += _board_lines(state.first, state.size, "Order scored")
                lines.append("")
            before = board_score(state.first, state.size).total
            lines.append(f"Round 2 of 2. In round 1, Order (now Chaos) scored {before}.")
        lines.append("")
        lines.extend(_board_lines(state.cells, state.size, "Order's score so far"))
        lines.append("")
        lines.extend(_supply_lines(state))
        return "\n".join(lines)

    # --- storage ----------------------------------------------------------------------------

    def dump(self, state: EntropyState) -> dict[str, Any]:
        """Versioned JSON; boards as rows of colour letters and ``.``, row 1 first."""
        result = None
        if state.result is not None:
            scores = state.result.scores or {}
            result = {
                "winners": sorted(state.result.winners),
                "reason": state.result.reason,
                "scores": [scores[0], scores[1]],
            }
        return {
            "version": self.STATE_VERSION,
            "size": state.size,
            "variant": state.variant,
            "round": state.round,
            "stage": state.stage,
            "board": _rows(state.cells, state.size),
            "first_board": None if state.first is None else _rows(state.first, state.size),
            "drawn": _letter(state.drawn) if state.drawn else None,
            "reserve": _letters(state.reserve),
            "ply": state.ply,
            "last_move": state.last_move,
            "result": result,
        }

    def load(self, data: Mapping[str, Any]) -> EntropyState:
        """Rebuild a state, checking every field against the rules; StateError if it is bad."""
        if not isinstance(data, Mapping):
            raise StateError("entropy: the state is not a JSON object")
        self._check_version(data)
        return _Loader(data).state()


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


# --- rules -----------------------------------------------------------------------------------


def _present(counts: tuple[int, ...]) -> list[int]:
    """The colour codes with a count above 0."""
    return [c + 1 for c, n in enumerate(counts) if n]


def _stockings(supply: tuple[int, ...], total: int, start: int = 0) -> Iterator[tuple[int, ...]]:
    """Every way to take ``total`` counters from ``supply`` (from colour ``start`` on)."""
    if start == len(supply) - 1:
        if total <= supply[start]:
            yield (total,)
        return
    for n in range(min(total, supply[start]), -1, -1):
        for rest in _stockings(supply, total - n, start + 1):
            yield (n, *rest)


def _slide_problem(state: EntropyState, src: int, dst: int) -> str | None:
    """Why the slide from ``src`` to ``dst`` is not allowed, or None."""
    size, cells = state.size, state.cells
    src_name, dst_name = square_name(src, size), square_name(dst, size)
    if not cells[src]:
        return f"there is no counter on {src_name} to slide"
    if src == dst:
        return f"{src_name}-{dst_name} does not move the counter; write pass to leave it"
    if cells[dst]:
        return f"{dst_name} already holds a {_named(cells[dst])} counter"
    for ray in _rays(size)[src]:
        if dst in ray:
            for cell in ray[: ray.index(dst)]:
                if cells[cell]:
                    return (
                        f"the {_named(cells[cell])} counter on {square_name(cell, size)} is in "
                        "the way; counters slide over empty squares only"
                    )
            return None
    return f"a counter slides like a rook, along its row or column; {dst_name} is neither"


def _stock_problem(state: EntropyState, counts: tuple[int, ...]) -> str | None:
    supply = state.supply()
    for c, n in enumerate(counts):
        if n > supply[c]:
            return f"the supply has only {supply[c]} {COLOURS[c][1]} counters"
    return None


def _problem(state: EntropyState, move: EntropyMove) -> str | None:
    """Why ``move`` cannot be applied in ``state`` (apply's check of a move it was handed)."""
    size = state.size
    expected = {Place: PLACE, Stock: STOCK, Slide: SLIDE, Pass: SLIDE}.get(type(move))
    if expected != state.stage:
        return f"it is the {state.stage} stage, not a {expected or 'known'} move"
    if isinstance(move, Stock):
        if (
            state.variant == STANDARD
            or len(move.counts) != size
            or sum(move.counts) != RESERVE_SIZE
        ):
            return "not a stocking of 5 counters"
        return _stock_problem(state, move.counts)
    if isinstance(move, Place):
        if not (0 <= move.cell < size * size) or state.cells[move.cell]:
            return "that square is not empty"
        if state.variant == STANDARD:
            return None if move.colour == state.drawn else "that is not the counter drawn"
        ok = 1 <= move.colour <= size and state.reserve[move.colour - 1]
        return None if ok else "that colour is not in Chaos's reserve"
    supply = state.supply() if state.variant == ENTROPY2 else ()
    if move.give:
        if not (1 <= move.give <= len(supply) and supply[move.give - 1]):
            return "the supply has no such counter to hand over"
    elif any(supply):
        return "Order must hand Chaos a counter from the supply"
    if isinstance(move, Slide):
        if not (0 <= move.src < size * size and 0 <= move.dst < size * size):
            return "that square is not on the board"
        return _slide_problem(state, move.src, move.dst)
    return None


def _round_start(
    size: int, variant: str, round_: int, rng: random.Random, first: bytes | None
) -> EntropyState:
    """A round's first position: an empty board, and Chaos's first draw in standard Entropy."""
    empty = bytes(size * size)
    reserve = (0,) * size
    if variant == STANDARD:
        drawn = _draw((size,) * size, rng)
        return EntropyState(size, variant, round_, PLACE, empty, reserve, drawn, first)
    return EntropyState(size, variant, round_, STOCK, empty, reserve, 0, first)


def _after_place(state: EntropyState, move: Place, rng: random.Random, text: str) -> EntropyState:
    cells = bytearray(state.cells)
    cells[move.cell] = move.colour
    reserve = state.reserve
    if state.variant == ENTROPY2:
        reserve = _bump(reserve, move.colour, -1)
    ply = state.ply + 1
    if 0 in cells:
        return replace(
            state,
            stage=SLIDE,
            cells=bytes(cells),
            reserve=reserve,
            drawn=0,
            ply=ply,
            last_move=text,
        )
    if state.round == 1:  # the board is full: round 2 starts with the roles swapped
        start = _round_start(state.size, state.variant, 2, rng, bytes(cells))
        return replace(start, ply=ply, last_move=text)
    final = replace(
        state, stage=OVER, cells=bytes(cells), reserve=reserve, drawn=0, ply=ply, last_move=text
    )
    return replace(final, result=_result(final))


def _after_order(
    state: EntropyState, move: Slide | Pass, rng: random.Random, text: str
) -> EntropyState:
    cells = state.cells
    if isinstance(move, Slide):
        moved = bytearray(cells)
        moved[move.dst], moved[move.src] = moved[move.src], 0
        cells = bytes(moved)
    reserve, drawn = state.reserve, 0
    if move.give:
        reserve = _bump(reserve, move.give, 1)
    if state.variant == STANDARD:
        size = state.size
        drawn = _draw(tuple(size - cells.count(c) for c in range(1, size + 1)), rng)
    return replace(
        state,
        stage=PLACE,
        cells=cells,
        reserve=reserve,
        drawn=drawn,
        ply=state.ply + 1,
        last_move=text,
    )


def _bump(counts: tuple[int, ...], colour: int, by: int) -> tuple[int, ...]:
    """``counts`` with the count of colour code ``colour`` changed by ``by``."""
    return (*counts[: colour - 1], counts[colour - 1] + by, *counts[colour:])


def _result(state: EntropyState) -> Outcome:
    """The outcome once round 2's board is full."""
    assert state.first is not None
    first = board_score(state.first, state.size).total
    second = board_score(state.cells, state.size).total
    second_order = state.order_seat  # Order of round 2; Order of round 1 is the other seat
    scores = {second_order: second, 1 - second_order: first}
    if first == second:
        return Outcome(
            frozenset(),
            f"both scored {first} points as Order",
            scores,
            termination=Termination.SCORE,
        )
    if second > first:
        return Outcome(
            frozenset({second_order}),
            f"{second} points as Order in round 2, against {first} in round 1",
            scores,
            termination=Termination.SCORE,
        )
    return Outcome(
        frozenset({1 - second_order}),
        f"{first} points as Order in round 1, against {second} in round 2",
        scores,
        termination=Termination.SCORE,
    )


def _option_size(raw: object) -> int:
    """The board size option: an int, or its digits as boards made before it was an int
    option have it stored."""
    if isinstance(raw, str) and raw.isdigit():
        raw = int(raw)
    if isinstance(raw, bool) or raw not in SIZES:
        raise OptionError(f"-size={raw}: choose one of 5, 7")
    return int(raw)


# --- prompts and errors ------------------------------------------------------------------------


def _example_square(state: EntropyState) -> str:
    cell = next(i for i in _centre_first(state.size) if not state.cells[i])
    return square_name(cell, state.size)


def _example_order(state: EntropyState) -> str:
    slide = next(_slides(state.cells, state.size), None)
    text = "pass" if slide is None else "-".join(square_name(i, state.size) for i in slide)
    if state.variant == ENTROPY2:
        left = _present(state.supply())
        if left:
            text += f" give {_letter(left[0])}"
    return text


def _task(state: EntropyState) -> str:
    """What the player to move does now, with an example that is legal here: the prompt of the
    board mail, and the hint at the end of error messages."""
    if state.stage == STOCK:
        counters = f"{RESERVE_SIZE} counters for Chaos's reserve"
        return f"as Order, choose {counters}, e.g. {_EXAMPLE_STOCK}"
    if state.stage == PLACE:
        square = _example_square(state)
        if state.variant == STANDARD:
            return f"as Chaos, place the {_named(state.drawn)} counter from the bag, e.g. {square}"
        first = _letter(_present(state.reserve)[0])
        return (
            f"as Chaos, place a counter of your reserve ({_spaced(state.reserve)}), "
            f"e.g. {square} {first}"
        )
    example = _example_order(state)
    if " give " in example:
        return f"as Order, slide or pass and give Chaos a counter, e.g. {example}"
    return f"as Order, slide a counter like a rook, e.g. {example}, or pass"


def _wrong_kind(state: EntropyState, shown: str) -> IllegalMoveError:
    """A move in the game's notation, but of another role or stage than the one in play."""
    if state.stage == STOCK:
        why = "a round of Entropy II opens with Order stocking Chaos's reserve"
    elif state.stage == PLACE:
        why = "only Order slides counters or passes"
    else:
        why = "only Chaos places counters"
    return IllegalMoveError(f"{shown}: {why}; {_task(state)}")


# --- the diagram -----------------------------------------------------------------------------


def _rows(cells: bytes, size: int) -> list[str]:
    text = "".join(_LETTERS[c - 1] if c else "." for c in cells)
    return [text[r * size : (r + 1) * size] for r in range(size)]


def _board_lines(cells: bytes, size: int, heading: str) -> list[str]:
    """The board, row N at the top, with each row's score on its right, each column's below,
    and the total."""
    score: BoardScore = board_score(cells, size)
    rows = _rows(cells, size)
    lines = [f"     {''.join(f'{c:>3}' for c in _COLUMNS[:size])}    row"]
    for r in range(size - 1, -1, -1):
        drawn = "".join(f"{c:>3}" for c in rows[r])
        lines.append(f"  {r + 1:>2} {drawn}  | {score.rows[r]:>3}")
    lines.append(f"      {'-' * (3 * size)}")
    lines.append(f"  col{''.join(f'{s:>3}' for s in score.columns)}")
    lines.append(
        f"{heading}: {sum(score.rows)} in rows + {sum(score.columns)} in columns = {score.total}."
    )
    return lines


def _legend(size: int) -> str:
    named = ", ".join(f"{letter} {name}" for letter, name in COLOURS[:size])
    return f"Colours: {named}."


def _supply_lines(state: EntropyState) -> list[str]:
    lines = [_legend(state.size)]
    if state.variant == STANDARD:
        bag = state.bag()
        lines.append(
            f"In the bag ({sum(bag)}): {_tally(bag)}." if any(bag) else "The bag is empty."
        )
        if state.drawn:
            lines.append(f"Drawn from the bag for Chaos to place: {_named(state.drawn)}.")
        return lines
    supply = state.supply()
    held = _spaced(state.reserve) or "empty"
    lines.append(f"Chaos's reserve ({sum(state.reserve)}): {held}.")
    lines.append(f"Supply, for Order to hand over ({sum(supply)}): {_tally(supply)}.")
    return lines


def _render_final(state: EntropyState) -> str:
    assert state.first is not None and state.result is not None
    size = state.size
    lines = ["Round 1 (Order was the player who is Chaos in round 2):", ""]
    lines.extend(_board_lines(state.first, size, "Order scored"))
    lines.extend(["", "Round 2:", ""])
    lines.extend(_board_lines(state.cells, size, "Order scored"))
    first = board_score(state.first, size).total
    second = board_score(state.cells, size).total
    lines.extend(["", f"Totals as Order: {second} in round 2, {first} in round 1.", _legend(size)])
    return "\n".join(lines)


# --- loading -------------------------------------------------------------------------------


@cache
def _codes_table(size: int) -> bytes:
    """bytes.translate table from the characters of a stored board to cell codes."""
    allowed = ("." + _LETTERS[:size]).encode()
    return bytes.maketrans(allowed, bytes(range(len(allowed))))


class _Loader:
    """Checks stored data field by field and rebuilds the state from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def fail(self, why: str) -> StateError:
        return StateError(f"entropy: {why}")

    def state(self) -> EntropyState:
        data = self.data
        size, variant, round_, stage = (data.get(k) for k in ("size", "variant", "round", "stage"))
        if type(size) is not int or size not in SIZES:
            raise self.fail(f"bad board size {size!r}")
        if variant not in (STANDARD, ENTROPY2):
            raise self.fail(f"bad variant {variant!r}")
        if type(round_) is not int or round_ not in (1, 2):
            raise self.fail(f"bad round {round_!r}")
        if stage not in (PLACE, SLIDE, STOCK, OVER) or (stage == STOCK and variant == STANDARD):
            raise self.fail(f"bad stage {stage!r}")
        cells = self.board(data.get("board"), size, "board")
        first = None
        if round_ == 2:
            first = self.board(data.get("first_board"), size, "first_board")
            if 0 in first:
                raise self.fail("round 1's board must be full")
        elif data.get("first_board") is not None:
            raise self.fail("round 1 has no earlier board")
        state = EntropyState(
            size=size,
            variant=variant,
            round=round_,
            stage=stage,
            cells=cells,
            reserve=self.reserve(data.get("reserve"), size, variant),
            drawn=self.drawn(data.get("drawn"), size),
            first=first,
            ply=data.get("ply"),  # type: ignore[arg-type]  # checked below
            last_move=data.get("last_move"),
        )
        self.check_progress(state)
        self.check_last_move(state)
        return replace(state, result=self.result(state))

    def board(self, rows: object, size: int, key: str) -> bytes:
        if (
            not isinstance(rows, list)
            or len(rows) != size
            or not all(isinstance(r, str) and len(r) == size for r in rows)
        ):
            raise self.fail(f"{key} must be {size} rows of {size} characters")
        text = "".join(rows)
        allowed = "." + _LETTERS[:size]
        if set(text) - set(allowed):
            raise self.fail(f"{key} may hold only {allowed!r}")
        # One C-level translate rather than a look-up per cell (a second board in round 2).
        cells = text.encode().translate(_codes_table(size))
        for c in range(1, size + 1):
            if cells.count(c) > size:
                raise self.fail(f"{key} has more than {size} {COLOURS[c - 1][1]} counters")
        return cells

    def reserve(self, raw: object, size: int, variant: str) -> tuple[int, ...]:
        if not isinstance(raw, str) or set(raw) - set(_LETTERS[:size]):
            raise self.fail(f"bad reserve {raw!r}")
        if variant == STANDARD and raw:
            raise self.fail("standard Entropy has no reserve")
        counts = tuple(raw.count(letter) for letter in _LETTERS[:size])
        if raw != _letters(counts):
            raise self.fail(f"the reserve {raw!r} is not in colour order")
        return counts

    def drawn(self, raw: object, size: int) -> int:
        if raw is None:
            return 0
        if not isinstance(raw, str) or len(raw) != 1 or raw not in _LETTERS[:size]:
            raise self.fail(f"bad drawn counter {raw!r}")
        return _LETTERS.index(raw) + 1

    def check_progress(self, state: EntropyState) -> None:
        """Stage, ply, drawn counter and reserve must fit the number of counters placed."""
        size, stage = state.size, state.stage
        area = size * size
        placed = area - state.cells.count(0)
        standard = state.variant == STANDARD
        per_round = 2 * area - 1 if standard else 2 * area
        if stage == OVER:
            within, ok = per_round, placed == area and state.round == 2
        elif stage == STOCK:
            within, ok = 0, placed == 0
        elif stage == PLACE:
            within, ok = 2 * placed + (not standard), placed < area
        else:
            within, ok = 2 * placed - standard, 0 < placed < area
        if not ok:
            raise self.fail(f"a {stage} stage with {placed} counters on the board")
        expected = within + (state.round - 1) * per_round
        if type(state.ply) is not int or state.ply != expected:
            raise self.fail(f"ply {state.ply!r} does not match the board (expected {expected})")
        wants_draw = standard and stage == PLACE
        if wants_draw != bool(state.drawn) or min(state.bag()) < 0:
            raise self.fail("the drawn counter does not match the stage and the bag")
        if not standard:
            held = sum(state.reserve)
            want = {PLACE: min(RESERVE_SIZE, area - placed), SLIDE: min(4, area - placed)}
            if held != want.get(stage, 0) or min(state.supply()) < 0:
                raise self.fail(f"Chaos's reserve of {held} does not match the board")

    def check_last_move(self, state: EntropyState) -> None:
        """The last move must be one that leads to this stage, and fit the board."""
        last = state.last_move
        if state.ply == 0:
            if last is not None:
                raise self.fail("no move made, yet a last move is stored")
            return
        if not isinstance(last, str):
            raise self.fail(f"bad last move {last!r}")
        placed = state.size * state.size - state.cells.count(0)
        if state.stage in (SLIDE, OVER):  # after a placement
            self.check_last_place(state, state.cells, last)
        elif placed and state.stage == PLACE:  # after Order's move
            self.check_last_order(state, last)
        elif state.stage == PLACE and state.variant == ENTROPY2:  # after the stocking
            if last != f"stock {_letters(state.reserve)}":
                raise self.fail(f"the last move {last!r} is not the stocking of the reserve")
        else:  # round 2 has just begun: after round 1's last placement
            self.check_last_place(state, state.first, last)

    def check_last_place(self, state: EntropyState, board: bytes | None, last: str) -> None:
        match = _CANONICAL_PLACE_RE.fullmatch(last)
        size = state.size
        if match is None or board is None:
            raise self.fail(f"the last move {last!r} is not a placement")
        col, row = _COLUMNS.index(match.group(1)), int(match.group(2)) - 1
        letter = match.group(3)
        if col >= size or row >= size or letter not in _LETTERS[:size]:
            raise self.fail(f"the last move {last!r} is off the board")
        if board[row * size + col] != _LETTERS.index(letter) + 1:
            raise self.fail(f"the last move {last!r} is not on the board")

    def check_last_order(self, state: EntropyState, last: str) -> None:
        match = _CANONICAL_ORDER_RE.fullmatch(last)
        if match is None:
            raise self.fail(f"the last move {last!r} is not Order's")
        size = state.size
        a, b, c, d, give = match.groups()
        if a is not None:
            cols, rows = (_COLUMNS.index(a), _COLUMNS.index(c)), (int(b) - 1, int(d) - 1)
            if max(*cols, *rows) >= size:
                raise self.fail(f"the last move {last!r} is off the board")
            src, dst = rows[0] * size + cols[0], rows[1] * size + cols[1]
            if state.cells[src] or not state.cells[dst] or src == dst:
                raise self.fail(f"the last move {last!r} does not fit the board")
        if state.variant == STANDARD:
            ok = give is None
        elif give is None:
            ok = not any(state.supply())
        else:
            ok = give in _LETTERS[:size] and state.reserve[_LETTERS.index(give)] > 0
        if not ok:
            raise self.fail(f"the counter handed over in {last!r} does not fit the variant")

    def result(self, state: EntropyState) -> Outcome | None:
        stored = self.data.get("result")
        if state.stage != OVER:
            if stored is not None:
                raise self.fail("a result is stored but the game goes on")
            return None
        result = _result(state)
        scores = result.scores or {}
        if (
            not isinstance(stored, Mapping)
            or stored.get("winners") != sorted(result.winners)
            or stored.get("scores") != [scores[0], scores[1]]
            or not isinstance(stored.get("reason"), str)
        ):
            raise self.fail(f"the stored result does not match the boards: {stored!r}")
        return replace(result, reason=stored["reason"])


GAME = Entropy()
