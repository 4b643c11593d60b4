"""Owlman (Andrew Perkis, 2010), SPEC 4.1, with the nightfall and classic rule sets.

Seat 0 is White (Doc, a king, on h1, and 12 helpers), seat 1 is Owlman (on a8). Only the
light squares (file + rank odd, a = 1) are used; the dark ones are trees. Every piece steps one
square diagonally; Owlman may instead swoop like a camel (3 + 1) over anything onto an empty
square. White never moves onto h1 (Doc starts there, and once he has left it is closed to
White). Owlman captures:

- Doc, by moving onto h1 (step or swoop) while Doc is still there;
- a helper, after a step only: the first piece further along the step's diagonal, at any
  distance with only empty squares between (the SPEC's ruling), if it is a helper;
- any helper, by the compulsory super swoop from h1 onto its square.

White wins with Doc on a8 and a helper on b7, or when Owlman cannot move; Owlman wins by
capturing Doc or every helper. Nightfall (default): Owlman also wins if White has not won after
White's 49th move. Classic: no limit, but in a position (Owlman to move) that occurred before,
Owlman may not play a move he already played there (the SPEC's ruling of White's demand).
Our ruling for a case the rules never mention: if White cannot move, Owlman wins.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    OptionSpec,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)
from pbmserv.games.drawing import Grid, Mark, cells_named, square_svg

WHITE, OWLMAN = 0, 1
DOC, HELPER, OWL, EMPTY = "K", "H", "O", "."
NIGHTFALL, CLASSIC = "nightfall", "classic"
NIGHTFALL_MOVES = 49
FILES = "abcdefgh"
DIAGONALS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
CAMEL = ((1, 3), (1, -3), (-1, 3), (-1, -3), (3, 1), (3, -1), (-3, 1), (-3, -1))
H1, A8, B7 = 7, 56, 49
START_HELPERS = ("d1", "f1", "e2", "g2", "d3", "f3", "h3", "e4", "g4", "d5", "f5", "h5")


def index(name: str) -> int:
    """The 0..63 index of a square name like "d3" (a1 = 0, h1 = 7, a8 = 56)."""
    return (int(name[1]) - 1) * 8 + FILES.index(name[0])


def name(square: int) -> str:
    """The name of a square index, the inverse of :func:`index`."""
    return f"{FILES[square % 8]}{square // 8 + 1}"


def is_light(square: int) -> bool:
    """True for the light squares (file + rank odd, a = 1), the only ones pieces use."""
    return (square % 8 + 1 + square // 8 + 1) % 2 == 1


def _shift(square: int, df: int, dr: int) -> int | None:
    f, r = square % 8 + df, square // 8 + dr
    return r * 8 + f if 0 <= f < 8 and 0 <= r < 8 else None


def _start_cells() -> str:
    cells = [EMPTY] * 64
    for helper in START_HELPERS:
        cells[index(helper)] = HELPER
    cells[H1], cells[A8] = DOC, OWL
    return "".join(cells)


class OwlMove(NamedTuple):
    src: int
    dst: int
    capture: int | None  # the square whose piece is taken (h1 for Doc), or None


@dataclass(frozen=True)
class OwlmanState:
    cells: str
    variant: str = NIGHTFALL
    ply: int = 0
    last_move: str | None = None
    winner: int | None = None
    reason: str = ""
    #: Classic only: "position|move" pairs Owlman has played (position with Owlman to move).
    played: frozenset[str] = frozenset()
    #: The kind of end, set with ``winner`` by the rules (not stored: they give it again).
    termination: Termination | None = None

    @property
    def to_move(self) -> int:
        """The seat to move: White on even plies, Owlman on odd ones."""
        return self.ply % 2

    @property
    def white_moves(self) -> int:
        """How many moves White has made (nightfall counts these)."""
        return (self.ply + 1) // 2


# --- move generation -------------------------------------------------------------------------


def _helper_capture(cells: str, src: int, dst: int) -> int | None:
    """The helper a step from ``src`` to ``dst`` scares away, if any."""
    df, dr = dst % 8 - src % 8, dst // 8 - src // 8
    square = _shift(dst, df, dr)
    while square is not None:
        piece = cells[square]
        if piece == HELPER:
            return square
        if piece != EMPTY:
            return None
        square = _shift(square, df, dr)
    return None


def owlman_moves(cells: str) -> Iterator[OwlMove]:
    """Every move of Owlman's, before the classic repetition rule."""
    src = cells.index(OWL)
    if src == H1:  # the compulsory super swoop
        for square, piece in enumerate(cells):
            if piece == HELPER:
                yield OwlMove(src, square, square)
        return
    for df, dr in DIAGONALS:
        dst = _shift(src, df, dr)
        if dst is not None and (cells[dst] == EMPTY or (dst == H1 and cells[dst] == DOC)):
            capture = H1 if cells[dst] == DOC else _helper_capture(cells, src, dst)
            yield OwlMove(src, dst, capture)
    for df, dr in CAMEL:
        dst = _shift(src, df, dr)
        if dst is not None and (cells[dst] == EMPTY or (dst == H1 and cells[dst] == DOC)):
            yield OwlMove(src, dst, H1 if cells[dst] == DOC else None)


def white_moves(cells: str) -> Iterator[OwlMove]:
    """Every step of Doc and the helpers; h1 is never a target (Doc's until he leaves it)."""
    for src, piece in enumerate(cells):
        if piece in (DOC, HELPER):
            for df, dr in DIAGONALS:
                dst = _shift(src, df, dr)
                if dst is not None and dst != H1 and cells[dst] == EMPTY:
                    yield OwlMove(src, dst, None)


def _moved(cells: str, move: OwlMove) -> str:
    chars = list(cells)
    if move.capture is not None:
        chars[move.capture] = EMPTY
    chars[move.dst], chars[move.src] = chars[move.src], EMPTY
    return "".join(chars)


def _text(move: OwlMove) -> str:
    capture = f"(x{name(move.capture)})" if move.capture is not None else ""
    return f"{name(move.src)}-{name(move.dst)}{capture}"


_MOVE = re.compile(
    r"([a-h][1-8])\s*[-x]?\s*([a-h][1-8])\s*(?:\(\s*x\s*([a-h][1-8])\s*\)|x([a-h][1-8]))?"
)


class Owlman(Game[OwlmanState, OwlMove]):
    """Owlman; seat 0 White (Doc and helpers, moves first), seat 1 Owlman."""

    SPEC = GameSpec(
        name="owlman",
        title="Owlman",
        seat_names=("White", "Owlman"),
        options=(
            OptionSpec(
                name="variant",
                type=str,
                default=NIGHTFALL,
                help="nightfall: Owlman wins if White has not won after 49 moves; "
                "classic: no limit, Owlman may not repeat a move in a repeated position",
                choices=(NIGHTFALL, CLASSIC),
            ),
        ),
        one_picture_for_all=True,
    )

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> OwlmanState:
        """The published setup; the game has no chance, so ``rng`` is unused."""
        return OwlmanState(cells=_start_cells(), variant=str(options.get("variant", NIGHTFALL)))

    def to_move(self, state: OwlmanState) -> Turn:
        """The side to move, with a prompt whose example is a legal move."""
        if state.winner is not None:
            return Turn(frozenset())
        seat = state.to_move
        if seat == WHITE:
            move = next(white_moves(state.cells), None)
            like = _text(move) if move is not None else "d3-c4"
            prompt = f"move Doc or a helper one square diagonally (like {like})"
        elif state.cells[H1] == OWL:
            prompt = "super swoop from h1 onto a helper (like h1xa6)"
        else:
            here = name(state.cells.index(OWL))
            prompt = f"step or swoop Owlman from {here} (write it like {here}-{_example(state)})"
        return Turn(frozenset({seat}), "move", {seat: prompt})

    def legal_moves(self, state: OwlmanState, seat: int) -> list[OwlMove]:
        """The moves ``seat`` may play; Owlman's exclude classic repetitions."""
        if seat not in self.to_move(state).seats:
            return []
        if seat == WHITE:
            return list(white_moves(state.cells))
        return [m for m in owlman_moves(state.cells) if not _repeats(state, m)]

    # --- reading and writing moves --------------------------------------------------------------

    def parse_move(self, state: OwlmanState, seat: int, text: str) -> OwlMove:
        """Read ``d3-c4``, ``d3c4``, ``d3 c4``, ``a8-b7(xd5)`` or ``h1xa6``; say why if illegal."""
        match = _MOVE.fullmatch(text.strip().lower())
        if not match:
            raise InvalidMoveError(
                f'"{text}" is not an Owlman move: write two squares like d3-c4, d3c4 or d3 c4 '
                "(a capture may be added: a8-b7(xd5))"
            )
        if seat not in self.to_move(state).seats:
            raise IllegalMoveError(f'"{text}": it is not your turn')
        src, dst = index(match[1]), index(match[2])
        written = match[3] or match[4]
        move = self._find(state, seat, src, dst, text)
        if written is not None and seat == WHITE:
            raise IllegalMoveError(f'"{text}": only Owlman captures; write just {_text(move)}')
        if written is not None and index(written) != move.capture:
            happens = (
                f"captures {name(move.capture)}"
                if move.capture is not None
                else ("captures nothing")
            )
            raise IllegalMoveError(f'"{text}": {name(src)}-{name(dst)} {happens}, not {written}')
        return move

    def _find(self, state: OwlmanState, seat: int, src: int, dst: int, text: str) -> OwlMove:
        cells = state.cells
        for square in (src, dst):
            if not is_light(square):
                raise IllegalMoveError(
                    f'"{text}": {name(square)} is a dark square (a tree); pieces stand only on '
                    "light squares"
                )
        piece = cells[src]
        if seat == WHITE and piece not in (DOC, HELPER):
            raise IllegalMoveError(f'"{text}": there is no piece of White\'s on {name(src)}')
        if seat == OWLMAN and piece != OWL:
            raise IllegalMoveError(f'"{text}": Owlman is on {name(cells.index(OWL))}')
        moves = white_moves(cells) if seat == WHITE else owlman_moves(cells)
        for move in moves:
            if (move.src, move.dst) == (src, dst):
                if seat == OWLMAN and _repeats(state, move):
                    raise IllegalMoveError(
                        f'"{text}": this position has occurred before and Owlman played '
                        f"{_text(move)} in it then; White demands that he vary"
                    )
                return move
        raise IllegalMoveError(f'"{text}": {self._why_not(cells, seat, src, dst)}')

    def _why_not(self, cells: str, seat: int, src: int, dst: int) -> str:
        if seat == OWLMAN and src == H1:
            return "from h1 Owlman must super swoop onto a helper's square"
        if seat == WHITE and dst == H1:
            if cells[H1] == DOC:
                return "h1 is Doc's church tower and he is still on it"
            return "h1 is closed to White once Doc has left it"
        if seat == OWLMAN and cells[dst] == HELPER:
            return (
                f"{name(dst)} is taken; Owlman scares a helper away by stepping towards it "
                "along a diagonal, not onto it"
            )
        if cells[dst] != EMPTY:
            return f"{name(dst)} is taken"
        if seat == WHITE:
            return "Doc and the helpers step one square diagonally"
        return "Owlman steps one square diagonally or swoops 3 + 1 squares (like a camel)"

    def format_move(self, state: OwlmanState, move: OwlMove) -> str:
        """The seed's form, the capture in brackets: ``b7-c6(xe4)``, ``h1-a6(xa6)``."""
        return _text(move)

    # --- playing ---------------------------------------------------------------------------------

    def apply(self, state: OwlmanState, move: OwlMove, rng: random.Random) -> OwlmanState:
        """The position after ``move`` (legal, from :meth:`parse_move`), with any result."""
        played = state.played
        if move.capture is not None:
            # The piece count only falls, so no earlier position can ever occur again.
            played = frozenset()
        elif state.variant == CLASSIC and state.to_move == OWLMAN:
            played = played | {f"{state.cells}|{_text(move)}"}
        after = replace(
            state,
            cells=_moved(state.cells, move),
            ply=state.ply + 1,
            last_move=_text(move),
            played=played,
        )
        return self._judge(after)

    def _judge(self, state: OwlmanState) -> OwlmanState:
        cells = state.cells
        if DOC not in cells:
            return _won(state, OWLMAN, "Owlman captured Doc on h1", Termination.GOAL)
        if HELPER not in cells:
            return _won(state, OWLMAN, "Owlman scared away every helper", Termination.GOAL)
        if cells[A8] == DOC and cells[B7] == HELPER:
            return _won(state, WHITE, "Doc and a helper reached the lair", Termination.GOAL)
        if state.to_move == OWLMAN and not self.legal_moves(state, OWLMAN):
            return _won(state, WHITE, "Owlman is trapped", Termination.NO_MOVES)
        if state.variant == NIGHTFALL and state.ply >= 2 * NIGHTFALL_MOVES - 1:
            why = f"night fell: White did not win within {NIGHTFALL_MOVES} moves"
            return _won(state, OWLMAN, why, Termination.MOVE_LIMIT)
        if state.to_move == WHITE and next(white_moves(cells), None) is None:
            return _won(state, OWLMAN, "White cannot move", Termination.NO_MOVES)
        return state

    def outcome(self, state: OwlmanState) -> Outcome | None:
        """The winner and why, once the game is over."""
        if state.winner is None:
            return None
        assert state.termination is not None  # set with the winner
        return Outcome(frozenset({state.winner}), state.reason, termination=state.termination)

    # --- the diagram -----------------------------------------------------------------------------

    def render(self, state: OwlmanState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """The board with coordinates, a key, the helpers left and the nightfall count."""
        del players  # the side names say who is who
        letters = "      " + " ".join(FILES)
        lines = [letters]
        for rank in range(8, 0, -1):
            row = []
            for f in range(8):
                square = (rank - 1) * 8 + f
                row.append(state.cells[square] if is_light(square) else "#")
            lines.append(f"   {rank}  {' '.join(row)}   {rank}")
        lines += [letters, "", "K Doc   H helper   O Owlman   . open square   # tree"]
        helpers = state.cells.count(HELPER)
        lines.append(f"Helpers left: {helpers} of 12.")
        if state.variant == NIGHTFALL and state.winner is None:
            lines.append(_nightfall_line(state.white_moves))
        elif state.variant == CLASSIC:
            lines.append("Classic rules: Owlman may not repeat a move in a repeated position.")
        return "\n".join(lines) + "\n"

    def svg(self, state: OwlmanState, viewer: Viewer) -> str:
        """The board, rank 8 at the top: trees on the dark squares, Doc gold, the helpers
        white, Owlman brown; the last move's squares highlighted."""
        del viewer  # no hidden information
        pieces = {
            DOC: Mark("#e8b923", "K"),
            HELPER: Mark("#ffffff", "H"),
            OWL: Mark("#6b3e1f", "O", "#ffffff"),
        }
        marks, trees = {}, set()
        for index, cell in enumerate(state.cells):
            at = (7 - index // 8, index % 8)
            if not is_light(index):
                trees.add(at)
            elif cell in pieces:
                marks[at] = pieces[cell]

        def cell_of(name: str) -> tuple[int, int] | None:
            return (8 - int(name[1]), FILES.index(name[0]))

        grid = Grid(
            rows=8,
            cols=8,
            marks=marks,
            row_labels=[str(r) for r in range(8, 0, -1)],
            col_labels=list(FILES),
            dark=frozenset(trees),
            dark_fill="#3f7d3a",
            highlight=cells_named(state.last_move, r"[a-h][1-8]", cell_of),
        )
        return square_svg(grid)

    def move_number(self, state: OwlmanState) -> int:
        """Moves made by both sides together."""
        return state.ply

    # --- storage ---------------------------------------------------------------------------------

    def dump(self, state: OwlmanState) -> dict[str, Any]:
        """Versioned JSON: the 64 cells as a string and the classic repetition record."""
        return {
            "version": self.STATE_VERSION,
            "cells": state.cells,
            "variant": state.variant,
            "ply": state.ply,
            "last_move": state.last_move,
            "winner": state.winner,
            "reason": state.reason,
            "played": sorted(state.played),
        }

    def load(self, data: Mapping[str, Any]) -> OwlmanState:
        """Rebuild a state from :meth:`dump`, checking every field and the stored result."""
        if not isinstance(data, Mapping):
            raise StateError("owlman: the state is not a JSON object")
        self._check_version(data)
        cells = _load_cells(data.get("cells"))
        variant, ply = data.get("variant"), data.get("ply")
        if variant not in (NIGHTFALL, CLASSIC) or type(ply) is not int or ply < 0:
            raise StateError("owlman: bad variant or ply")
        last = data.get("last_move")
        if (ply == 0) != (last is None) or (last is not None and not _CANONICAL.fullmatch(last)):
            raise StateError(f"owlman: bad last move {last!r} at ply {ply}")
        played = data.get("played")
        if not isinstance(played, list) or not all(
            isinstance(p, str) and _PLAYED.fullmatch(p) for p in played
        ):
            raise StateError("owlman: bad record of repeated positions")
        if played and variant != CLASSIC:
            raise StateError("owlman: only the classic rules record repeated positions")
        winner, reason = data.get("winner"), data.get("reason")
        if winner is not None and type(winner) is not int:
            raise StateError("owlman: bad winner")
        state = OwlmanState(cells, variant, ply, last, None, "", frozenset(played))
        judged = self._judge(state)
        # The result is a function of the position: a stored one must be exactly that.
        if (judged.winner, judged.reason) != (winner, reason or ""):
            raise StateError(f"owlman: the stored result {winner!r} does not match the board")
        return judged


_CANONICAL = re.compile(r"[a-h][1-8]-[a-h][1-8](\(x[a-h][1-8]\))?")
_PLAYED = re.compile(r"[KHO.]{64}\|" + _CANONICAL.pattern)


def _load_cells(cells: object) -> str:
    """The board of a stored state, checked: 64 cells of K, H, O and '.' on light squares."""
    if not isinstance(cells, str) or len(cells) != 64 or set(cells) - {DOC, HELPER, OWL, EMPTY}:
        raise StateError("owlman: cells must be 64 of K, H, O and .")
    if cells.count(OWL) != 1 or cells.count(DOC) > 1 or cells.count(HELPER) > 12:
        raise StateError("owlman: one Owlman, at most one Doc and 12 helpers")
    if any(p != EMPTY and not is_light(i) for i, p in enumerate(cells)):
        raise StateError("owlman: a piece stands on a tree")
    return cells


def _example(state: OwlmanState) -> str:
    """A square Owlman can reach now, for the prompt (the game is over if there is none)."""
    move = next((m for m in owlman_moves(state.cells) if not _repeats(state, m)), None)
    return name(move.dst) if move is not None else "b7"


def _nightfall_line(done: int) -> str:
    """How far White is towards nightfall, e.g. "White has made 1 of 49 moves; 48 left"."""
    left = NIGHTFALL_MOVES - done
    return (
        f"Nightfall: White has made {done} of {NIGHTFALL_MOVES} moves; "
        f"{left} {'move' if left == 1 else 'moves'} left to win."
    )


def _repeats(state: OwlmanState, move: OwlMove) -> bool:
    """Classic: Owlman already played ``move`` in this very position."""
    return state.variant == CLASSIC and f"{state.cells}|{_text(move)}" in state.played


def _won(state: OwlmanState, winner: int, reason: str, kind: Termination) -> OwlmanState:
    return replace(state, winner=winner, reason=reason, termination=kind)


GAME = Owlman()
