"""Buffalo (Alex Randolph, 1975) and Rebel Buffalo, SPEC 4.4.

An 11 x 7 board, columns a-k and rows 1-7; two rivers lie between rows 1-2 and 6-7. Seat 0
is Black (11 buffalo on row 7, moves first), seat 1 is White (the Indian chief on f2 and dogs
on d2 e2 g2 h2). A buffalo steps straight towards row 1 onto an empty square; a dog moves like a
queen without jumping or capturing; the chief moves like a king and captures a buffalo by
moving onto it; neither ever crosses a river (rows 2-6 only). Black wins when a buffalo reaches
row 1, or when White cannot move; White wins when Black cannot move.

Rebel Buffalo (the SPEC's ruling): after a buffalo's move, every dog standing between two
buffalo on opposite orthogonal sides (left and right, or above and below, each directly next
to it) goes back to row 2: to the squares the move names with ``dog:SQUARE`` (one per enclosed
dog, given to the dogs in board order: by column, then row), else to the empty row-2 square
nearest the dog's column (the lower column on a tie).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any, NamedTuple

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    OptionSpec,
    Outcome,
    StateError,
    Turn,
    Viewer,
)

COLS, ROWS = 11, 7
LETTERS = "abcdefghijk"
BLACK, WHITE = 0, 1
BUFFALO, DOG, CHIEF, EMPTY = "B", "D", "C", "."
STANDARD, REBEL = "standard", "rebel"
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
START = (
    EMPTY * COLS  # row 1
    + "...DDCDD..."  # row 2
    + EMPTY * COLS * 4  # rows 3-6
    + BUFFALO * COLS  # row 7
)


def square(col: int, row: int) -> int:
    """Index of (col 0-10, row 1-7) in the cells string."""
    return (row - 1) * COLS + col


def name(index: int) -> str:
    return f"{LETTERS[index % COLS]}{index // COLS + 1}"


def _col_row(index: int) -> tuple[int, int]:
    return index % COLS, index // COLS + 1


class BuffaloMove(NamedTuple):
    """A move from one square to another; ``placements``: where enclosed dogs go (rebel),
    one target per enclosed dog in board order."""

    src: int
    dst: int
    placements: tuple[int, ...] = ()


@dataclass(frozen=True)
class BuffaloState:
    cells: str = START
    variant: str = STANDARD
    ply: int = 0
    last_move: str | None = None
    winner: int | None = None
    reason: str = ""

    @property
    def to_move(self) -> int:
        return self.ply % 2


# --- the rules -------------------------------------------------------------------------------


def _inside(col: int, row: int) -> bool:
    return 0 <= col < COLS and 1 <= row <= ROWS


def _white_targets(cells: str, src: int) -> Iterator[int]:
    """Squares a dog or the chief on ``src`` can reach (rows 2-6 only)."""
    col, row = _col_row(src)
    piece = cells[src]
    for dc, dr in KING_STEPS:
        c, r = col + dc, row + dr
        while _inside(c, r) and 2 <= r <= 6:
            target = cells[square(c, r)]
            if target == EMPTY:
                yield square(c, r)
            elif piece == CHIEF and target == BUFFALO:
                yield square(c, r)
                break
            else:
                break
            if piece == CHIEF:
                break
            c, r = c + dc, r + dr


def _buffalo_moves(cells: str) -> Iterator[tuple[int, int]]:
    for src, piece in enumerate(cells):
        if piece == BUFFALO and src >= COLS and cells[src - COLS] == EMPTY:
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
    """Dogs between two buffalo on opposite orthogonal sides, in board order (column, row)."""
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


def default_home(cells: str, dog: int) -> int | None:
    """The empty row-2 square nearest the dog's column, the lower column on a tie."""
    col = dog % COLS
    empty = [c for c in range(COLS) if cells[square(c, 2)] == EMPTY]
    if not empty:
        return None
    return square(min(empty, key=lambda c: (abs(c - col), c)), 2)


def _send_home(
    cells: str, dogs: Sequence[int], named: Sequence[int]
) -> tuple[str, tuple[int, ...]]:
    """Cells after the enclosed ``dogs`` go back to row 2 (``named`` first, then defaults)."""
    placed = []
    chars = list(cells)
    for k, dog in enumerate(dogs):
        chars[dog] = EMPTY
        board = "".join(chars)
        target = named[k] if k < len(named) else default_home(board, dog)
        if target is None:  # row 2 is full: the dog stays
            chars[dog] = DOG
            placed.append(dog)
            continue
        chars[target] = DOG
        placed.append(target)
    return "".join(chars), tuple(placed)


class Buffalo(Game):
    """Buffalo and Rebel Buffalo; seat 0 Black (the buffalo), seat 1 White."""

    SPEC = GameSpec(
        name="buffalo",
        title="Buffalo",
        seat_names=("Black", "White"),
        aliases=("rebelbuffalo",),
        options=(
            OptionSpec(
                name="variant",
                type=str,
                default=STANDARD,
                help="standard: Buffalo; rebel: dogs enclosed by buffalo go back to row 2",
                choices=(STANDARD, REBEL),
            ),
        ),
    )

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> BuffaloState:
        return BuffaloState(variant=str(options.get("variant", STANDARD)))

    def to_move(self, state: BuffaloState) -> Turn:
        if state.winner is not None:
            return Turn(frozenset())
        seat = state.to_move
        prompt = (
            "move a buffalo one square towards row 1 (e7-e6 or just e6)"
            if seat == BLACK
            else "move a dog (like a queen) or the chief (like a king; f2xf3 captures)"
        )
        return Turn(frozenset({seat}), "move", {seat: prompt})

    # --- reading and writing moves ------------------------------------------------------------

    def parse_move(self, state: BuffaloState, seat: int, text: str) -> BuffaloMove:
        words = text.strip().lower().split()
        dogs = [w for w in words if w.startswith("dog:")]
        main = " ".join(w for w in words if not w.startswith("dog:"))
        match = re.fullmatch(r"([a-k])([1-7])(?:\s*[-x]?\s*([a-k])([1-7]))?", main)
        if not match:
            raise InvalidMoveError(
                f'"{text}" is not a Buffalo move: write two squares like e7-e6 (or f2xf3 for a '
                "capture), or a buffalo's target alone like e6"
            )
        if seat not in self.to_move(state).seats:
            raise IllegalMoveError(f'"{text}": it is not your turn')
        a = square(LETTERS.index(match[1]), int(match[2]))
        if match[3]:
            src, dst = a, square(LETTERS.index(match[3]), int(match[4]))
        else:
            if seat != BLACK:
                raise IllegalMoveError(
                    f'"{text}": name both squares of a dog or chief move, like d2-d5'
                )
            src, dst = a + COLS, a
            if a + COLS >= COLS * ROWS or state.cells[src] != BUFFALO:
                raise IllegalMoveError(f'"{text}": no buffalo can step to {name(a)}')
        self._check(state, seat, src, dst, text)
        return self._with_dogs(state, src, dst, dogs, text)

    def _check(self, state: BuffaloState, seat: int, src: int, dst: int, text: str) -> None:
        cells = state.cells
        piece = cells[src]
        if seat == BLACK:
            if piece != BUFFALO:
                raise IllegalMoveError(f'"{text}": there is no buffalo on {name(src)}')
            if dst != src - COLS:
                raise IllegalMoveError(
                    f'"{text}": a buffalo moves one square straight towards row 1 only'
                )
            if cells[dst] != EMPTY:
                raise IllegalMoveError(f'"{text}": {name(dst)} is taken; buffalo never capture')
            return
        if piece not in (DOG, CHIEF):
            raise IllegalMoveError(f'"{text}": there is no dog or chief of yours on {name(src)}')
        if dst not in _white_targets(cells, src):
            raise IllegalMoveError(f'"{text}": {self._why_not(cells, src, dst)}')

    def _why_not(self, cells: str, src: int, dst: int) -> str:
        who = "the chief" if cells[src] == CHIEF else "a dog"
        _, row = _col_row(dst)
        if row in (1, 7):
            return f"{who} never crosses a river: rows 1 and 7 are beyond them"
        if cells[src] == CHIEF:
            return "the chief steps one square (any direction) onto an empty square or a buffalo"
        if cells[dst] != EMPTY:
            return f"{name(dst)} is taken, and dogs never capture"
        return "a dog moves in a straight line (like a queen) without jumping"

    def _with_dogs(
        self, state: BuffaloState, src: int, dst: int, words: list[str], text: str
    ) -> BuffaloMove:
        if state.cells[src] != BUFFALO or state.variant != REBEL:
            if words:
                raise IllegalMoveError(
                    f'"{text}": dog: is part of a buffalo move in Rebel Buffalo only'
                )
            return BuffaloMove(src, dst)
        after = _moved(state.cells, src, dst)
        dogs = enclosed_dogs(after)
        if len(words) > len(dogs):
            raise IllegalMoveError(
                f'"{text}": this move encloses {len(dogs)} dog(s), so it takes at most '
                f"{len(dogs)} dog: square(s)"
            )
        named = []
        board = list(after)
        for word, dog in zip(words, dogs, strict=False):
            target = re.fullmatch(r"dog:([a-k])([1-7])", word)
            if not target:
                raise InvalidMoveError(f'"{text}": write a dog\'s new square as dog:b2')
            index = square(LETTERS.index(target[1]), int(target[2]))
            board[dog] = EMPTY
            if int(target[2]) != 2:
                raise IllegalMoveError(
                    f'"{text}": an enclosed dog goes back to row 2, not row {target[2]}'
                )
            if board[index] != EMPTY:
                raise IllegalMoveError(f'"{text}": {name(index)} is taken')
            board[index] = DOG
            named.append(index)
        _, placed = _send_home(after, dogs, named)
        return BuffaloMove(src, dst, placed)

    def format_move(self, state: BuffaloState, move: BuffaloMove) -> str:
        capture = state.cells[move.dst] == BUFFALO
        text = f"{name(move.src)}{'x' if capture else '-'}{name(move.dst)}"
        return " ".join([text, *(f"dog:{name(p)}" for p in move.placements)])

    # --- moves and results ---------------------------------------------------------------------

    def legal_moves(self, state: BuffaloState, seat: int) -> list[BuffaloMove]:
        if seat not in self.to_move(state).seats:
            return []
        if seat == WHITE:
            return [BuffaloMove(s, d) for s, d in _white_moves(state.cells)]
        moves = []
        for src, dst in _buffalo_moves(state.cells):
            if state.variant != REBEL:
                moves.append(BuffaloMove(src, dst))
                continue
            after = _moved(state.cells, src, dst)
            dogs = enclosed_dogs(after)
            moves.extend(BuffaloMove(src, dst, p) for p in _placements(after, dogs))
        return moves

    def apply(self, state: BuffaloState, move: BuffaloMove, rng: random.Random) -> BuffaloState:
        text = self.format_move(state, move)
        cells = _moved(state.cells, move.src, move.dst)
        if state.cells[move.src] == BUFFALO and state.variant == REBEL:
            cells, _ = _send_home(cells, enclosed_dogs(cells), move.placements)
        after = replace(state, cells=cells, ply=state.ply + 1, last_move=text)
        return _judge(after)

    def outcome(self, state: BuffaloState) -> Outcome | None:
        if state.winner is None:
            return None
        return Outcome(frozenset({state.winner}), state.reason)

    # --- the diagram ---------------------------------------------------------------------------

    def render(self, state: BuffaloState, viewer: Viewer) -> str:
        letters = "      " + " ".join(LETTERS)
        river = "     " + "~" * (2 * COLS + 1) + "  river"
        lines = [letters]
        for row in range(ROWS, 0, -1):
            cells = " ".join(state.cells[square(c, row)] for c in range(COLS))
            lines.append(f"   {row}  {cells}   {row}")
            if row in (7, 2):
                lines.append(river)
        lines += [letters, "", "B buffalo (Black)   C Indian chief, D dog (White)   . empty"]
        buffalo = state.cells.count(BUFFALO)
        lines.append(f"Buffalo left: {buffalo} of 11.")
        if state.variant == REBEL:
            lines.append("Rebel Buffalo: dogs enclosed between two buffalo go back to row 2.")
        return "\n".join(lines) + "\n"

    # --- storage -------------------------------------------------------------------------------

    def dump(self, state: BuffaloState) -> dict[str, Any]:
        return {
            "version": self.STATE_VERSION,
            "cells": state.cells,
            "variant": state.variant,
            "ply": state.ply,
            "last_move": state.last_move,
            "winner": state.winner,
            "reason": state.reason,
        }

    def load(self, data: Mapping[str, Any]) -> BuffaloState:
        self._check_version(data)
        cells = data.get("cells")
        if not isinstance(cells, str) or len(cells) != COLS * ROWS or set(cells) - set("BDC."):
            raise StateError("buffalo: cells must be 77 of B, D, C and .")
        white = [i for i, p in enumerate(cells) if p in (DOG, CHIEF)]
        if cells.count(CHIEF) != 1 or cells.count(DOG) != 4 or cells.count(BUFFALO) > 11:
            raise StateError("buffalo: there must be one chief, four dogs and at most 11 buffalo")
        if any(not 2 <= _col_row(i)[1] <= 6 for i in white):
            raise StateError("buffalo: a dog or the chief stands beyond a river")
        variant, ply, winner = data.get("variant"), data.get("ply"), data.get("winner")
        if variant not in (STANDARD, REBEL) or not isinstance(ply, int) or ply < 0:
            raise StateError("buffalo: bad variant or ply")
        if winner not in (None, BLACK, WHITE) or not isinstance(data.get("reason"), str):
            raise StateError("buffalo: bad result")
        last = data.get("last_move")
        if last is not None and not isinstance(last, str):
            raise StateError("buffalo: bad last move")
        return BuffaloState(cells, variant, ply, last, winner, data["reason"])


def _placements(after: str, dogs: list[int]) -> list[tuple[int, ...]]:
    """Every way to send the enclosed ``dogs`` back to row 2 (each to a distinct empty square)."""
    if not dogs:
        return [()]
    board = list(after)
    for dog in dogs:
        board[dog] = EMPTY
    empty = [square(c, 2) for c in range(COLS) if board[square(c, 2)] == EMPTY]
    if len(empty) < len(dogs):
        return [_send_home(after, dogs, ())[1]]
    return list(permutations(empty, len(dogs)))


def _judge(state: BuffaloState) -> BuffaloState:
    """Set the winner if the move just made ended the game."""
    cells = state.cells
    if BUFFALO in cells[:COLS]:
        return replace(state, winner=BLACK, reason="a buffalo crossed the river to row 1")
    if state.to_move == WHITE and next(_white_moves(cells), None) is None:
        return replace(state, winner=BLACK, reason="White cannot move")
    if state.to_move == BLACK and next(_buffalo_moves(cells), None) is None:
        why = "every buffalo is captured" if BUFFALO not in cells else "no buffalo can move"
        return replace(state, winner=WHITE, reason=f"Black cannot move: {why}")
    return state


GAME = Buffalo()
