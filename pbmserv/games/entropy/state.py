"""Entropy's moves, its state, and the board's squares, rays and colours."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import compress
from typing import Final, NamedTuple

from pbmserv.games.base import (
    Outcome,
)

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
    names = _square_names(size)
    if 0 <= cell < len(names):
        return names[cell]
    row, col = divmod(cell, size)  # off the board: named all the same, for the error message
    return f"{_COLUMNS[col]}{row + 1}"


@cache
def _square_names(size: int) -> tuple[str, ...]:
    """Every square's name, made once: a robot's search names each move it applies."""
    return tuple(f"{_COLUMNS[col]}{row + 1}" for row in range(size) for col in range(size))


@cache
def square_rays(size: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
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
    rays = square_rays(size)
    for src, colour in enumerate(cells):
        if colour:
            for ray in rays[src]:
                for dst in ray:
                    if cells[dst]:
                        break
                    yield src, dst


#: bytes.translate table marking the empty squares of a board (1) and the others (0), to pick
#: squares with itertools.compress.
_EMPTY_FLAGS: Final = bytes([1] + [0] * 255)


@cache
def _placements(size: int) -> tuple[tuple[Place, ...], ...]:
    """``Place(cell, colour)`` for every cell, one tuple a colour code (0 unused), made once."""
    return tuple(
        tuple(Place(cell, colour) for cell in range(size * size)) for colour in range(size + 1)
    )


def _placements_of(cells: bytes, size: int, colour: int) -> list[EntropyMove]:
    """Every placement of ``colour`` on an empty square, in square order."""
    return list(compress(_placements(size)[colour], cells.translate(_EMPTY_FLAGS)))


@cache
def _ray_slides(size: int) -> tuple[tuple[tuple[tuple[int, ...], tuple[Slide, ...]], ...], ...]:
    """For each cell, its rays in the order of :func:`square_rays` (empty ones left out), each with
    the slides along it, nearest first: the moves are made once, not once a position."""
    return tuple(
        tuple((ray, tuple(Slide(src, dst) for dst in ray)) for ray in rays if ray)
        for src, rays in enumerate(square_rays(size))
    )


@lru_cache(maxsize=4096)
def _slide_moves(cells: bytes, size: int) -> tuple[Slide, ...]:
    """The moves of :func:`_slides` (handing nothing over), in the same order. Kept for the
    boards met again: a robot's search asks for the same boards' moves thousands of times."""
    moves: list[Slide] = []
    table = _ray_slides(size)
    for src in compress(range(size * size), cells):
        for ray, slides in table[src]:
            reach = 0
            for dst in ray:
                if cells[dst]:
                    break
                reach += 1
            if reach:
                moves += slides[:reach]
    return tuple(moves)


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
