"""Buffalo's board and rules: the squares and pieces, a move and the state, the moves each
side has, the enclosed dogs of Rebel Buffalo and where they go, and the result of a position."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import permutations
from typing import NamedTuple

from pbmserv.games.base import Termination

COLS, ROWS = 11, 7
LETTERS = "abcdefghijk"
BLACK, WHITE = 0, 1
ROLES = ("Black", "White")
BUFFALO, DOG, CHIEF, EMPTY = "B", "D", "C", "."
STANDARD, REBEL = "standard", "rebel"
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
START = (
    EMPTY * COLS  # row 1
    + "...DDCDD..."  # row 2
    + EMPTY * COLS * 4  # rows 3-6
    + BUFFALO * COLS  # row 7
)
_PIECE_NAMES = {BUFFALO: "a buffalo", DOG: "a dog", CHIEF: "the chief"}


def square(col: int, row: int) -> int:
    """Index of (column 0-10, row 1-7) in a state's ``cells`` string."""
    return (row - 1) * COLS + col


def name(index: int) -> str:
    """The square's name, like ``e7``."""
    return f"{LETTERS[index % COLS]}{index // COLS + 1}"


def _col_row(index: int) -> tuple[int, int]:
    return index % COLS, index // COLS + 1


class BuffaloMove(NamedTuple):
    """A piece's move from ``src`` to ``dst``; ``placements`` are the (dog, row-2 square)
    pairs of the enclosed dogs sent home by it (Rebel Buffalo), in board order of the dogs."""

    src: int
    dst: int
    placements: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class BuffaloState:
    """A position: ``cells`` holds 77 of B, D, C and ``.``, row 1 first, a-k in each row."""

    cells: str = START
    variant: str = STANDARD
    ply: int = 0
    last_move: str | None = None
    winner: int | None = None
    reason: str = ""
    #: The kind of end, set with ``winner`` by the rules (not stored: they give it again).
    termination: Termination | None = None

    @property
    def to_move(self) -> int:
        """The seat whose turn it is (Black on even plies)."""
        return self.ply % 2


def position(
    pieces: Mapping[str, str], to_move: int = BLACK, variant: str = STANDARD
) -> BuffaloState:
    """A hand-built position: ``pieces`` maps squares (``"e5"``) to B, D or C; the result is
    judged at once, so a position where the side to move is stuck reports its outcome."""
    cells = [EMPTY] * (COLS * ROWS)
    for where, piece in pieces.items():
        cells[square(LETTERS.index(where[0]), int(where[1:]))] = piece
    state = BuffaloState(cells="".join(cells), variant=variant, ply=to_move)
    return _judge(state)


# --- the rules -------------------------------------------------------------------------------


def _inside(col: int, row: int) -> bool:
    return 0 <= col < COLS and 1 <= row <= ROWS


def _white_targets(cells: str, src: int) -> Iterator[int]:
    """Squares a dog or the chief on ``src`` can reach (rows 2-6 only)."""
    col, row = _col_row(src)
    piece = cells[src]
    for dc, dr in KING_STEPS:
        c, r = col + dc, row + dr
        while 0 <= c < COLS and 2 <= r <= 6:
            target = cells[square(c, r)]
            if target == EMPTY or (piece == CHIEF and target == BUFFALO):
                yield square(c, r)
            if target != EMPTY or piece == CHIEF:
                break
            c, r = c + dc, r + dr


def _buffalo_moves(cells: str) -> Iterator[tuple[int, int]]:
    for src in range(COLS, COLS * ROWS):
        if cells[src] == BUFFALO and cells[src - COLS] == EMPTY:
            yield src, src - COLS


def _white_moves(cells: str) -> Iterator[tuple[int, int]]:
    for src, piece in enumerate(cells):
        if piece in (DOG, CHIEF):
            for dst in _white_targets(cells, src):
                yield src, dst


def _moved(cells: str, src: int, dst: int) -> str:
    chars = list(cells)
    chars[dst], chars[src] = chars[src], EMPTY
    return "".join(chars)


def enclosed_dogs(cells: str) -> list[int]:
    """Dogs with buffalo directly on both sides, left and right or above and below, in board
    order (by column, then row)."""
    found = []
    for index, piece in enumerate(cells):
        if piece != DOG:
            continue
        col, row = _col_row(index)
        for (c1, r1), (c2, r2) in (
            ((col - 1, row), (col + 1, row)),
            ((col, row - 1), (col, row + 1)),
        ):
            if (
                _inside(c1, r1)
                and _inside(c2, r2)
                and cells[square(c1, r1)] == BUFFALO
                and cells[square(c2, r2)] == BUFFALO
            ):
                found.append(index)
                break
    return sorted(found, key=_col_row)


def _row_two_free(chars: Sequence[str]) -> list[int]:
    return [square(c, 2) for c in range(COLS) if chars[square(c, 2)] == EMPTY]


def _lifted(cells: str, dogs: Sequence[int]) -> list[str]:
    chars = list(cells)
    for dog in dogs:
        chars[dog] = EMPTY
    return chars


def _complete_placements(cells: str, dogs: Sequence[int]) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every way to put each of ``dogs`` on its own empty square of row 2, none on the square
    it was lifted from, in the order of the free squares."""
    free = _row_two_free(_lifted(cells, dogs))
    for targets in permutations(free, len(dogs)):
        if all(dog != target for dog, target in zip(dogs, targets, strict=True)):
            yield tuple(zip(dogs, targets, strict=True))


def room_for(cells: str, dogs: Sequence[int]) -> bool:
    """Whether every one of ``dogs`` can go to an empty row-2 square other than its own."""
    return next(_complete_placements(cells, dogs), None) is not None


def _distance(placements: Sequence[tuple[int, int]]) -> int:
    return sum(abs(dog % COLS - target % COLS) for dog, target in placements)


def send_home(
    cells: str, dogs: Sequence[int], named: Mapping[int, int]
) -> tuple[tuple[int, int], ...]:
    """Where the enclosed ``dogs`` go: ``named`` (dog -> square) first, then the others to
    the nearest empty row-2 square that is not their own, those on row 2 first, then in board
    order. A dog that finds no such square stays where it is (and is left out of the result)."""
    chars = _lifted(cells, dogs)
    for target in named.values():
        chars[target] = DOG
    placed = dict(named)
    for dog in sorted((d for d in dogs if d not in named), key=lambda d: (d // COLS != 1, d)):
        free = [s for s in _row_two_free(chars) if s != dog]
        if not free:
            chars[dog] = DOG  # it stays, so no other dog may take its square
            continue
        col = dog % COLS
        target = min(free, key=lambda s: (abs(s % COLS - col), s))
        chars[target] = DOG
        placed[dog] = target
    if len(placed) < len(dogs):
        # Nearest-first stranded a dog that some other choice would have moved.
        fitting = [p for p in _complete_placements(cells, dogs) if named.items() <= dict(p).items()]
        if fitting:
            return min(fitting, key=lambda p: (_distance(p), p))
    return tuple(sorted(placed.items(), key=lambda pair: _col_row(pair[0])))


def _placed_cells(cells: str, placements: Sequence[tuple[int, int]]) -> str:
    chars = _lifted(cells, [dog for dog, _ in placements])
    for _, target in placements:
        chars[target] = DOG
    return "".join(chars)


def _all_placements(after: str, dogs: list[int]) -> list[tuple[tuple[int, int], ...]]:
    """Every way to send the enclosed ``dogs`` home (each to its own empty row-2 square, never
    the one it stood on); the default placement alone when there is no such way."""
    if not dogs:
        return [()]
    return list(_complete_placements(after, dogs)) or [send_home(after, dogs, {})]


def _example(moves: Iterator[tuple[int, int]]) -> tuple[int, int]:
    """A move to show in the prompt: the one nearest the middle column (the board's order
    breaks ties). Only called while the side to move has a move."""
    return min(moves, key=lambda move: abs(move[0] % COLS - COLS // 2))


def _judge(state: BuffaloState) -> BuffaloState:
    """The state with its result set if the position is over."""
    cells = state.cells
    crossed = [name(i) for i in range(COLS) if cells[i] == BUFFALO]
    if crossed:
        reason = f"a buffalo crossed the river to row 1, at {crossed[0]}"
        return replace(state, winner=BLACK, reason=reason, termination=Termination.GOAL)
    if state.to_move == WHITE and next(_white_moves(cells), None) is None:
        return replace(
            state, winner=BLACK, reason="White cannot move", termination=Termination.NO_MOVES
        )
    if state.to_move == BLACK and next(_buffalo_moves(cells), None) is None:
        if BUFFALO not in cells:
            why, kind = "every buffalo is captured", Termination.GOAL
        else:
            why, kind = "no buffalo can move", Termination.NO_MOVES
        return replace(state, winner=WHITE, reason=why, termination=kind)
    return replace(state, winner=None, reason="", termination=None)
