"""Owlman's lean position for the tactics and the tree search (:mod:`pbmserv.robots.tactics`).

The rule module builds a new immutable state a move, its 64 cells a string copied each time,
and judges it by generating every move of both sides. Here one position is changed in place:
a list of the 64 cells, the squares of Owlman and Doc and the helpers' count kept as the moves
change them, an undo stack, and the result judged once when a move is pushed (in the rules'
order, so that the same side wins). Every move Owlman or White can make is built once, when
the module loads (the rules' own :class:`~pbmserv.games.owlman.OwlMove` objects, so the search's
moves are the rules' moves), and found again by looking at a few cells.

Both rule sets are played exactly, the classic repetition rule too: the position keeps the set
of (cells, from, to) Owlman has played, pushes add to it and pops take back, and a capture
empties it as in the rules (no position before a capture can occur again). Without it the
tree or the tactics could pick a move the real game forbids.

The moves come in the rules' order (White's by square, Owlman's steps then swoops), so the tree
moves and the playout moves are those of the policy's candidates and chooser
(:mod:`pbmserv.robots.policies.owlman`), drawn with the same calls on the generator; the
evaluation is the policy's, in its own units (a logistic's argument), from the side to move's
view.
"""

from __future__ import annotations

import math
import random
from typing import Any

from pbmserv.games.owlman import (
    A8,
    B7,
    CAMEL,
    DIAGONALS,
    DOC,
    EMPTY,
    H1,
    HELPER,
    NIGHTFALL,
    NIGHTFALL_MOVES,
    OWL,
    OWLMAN,
    WHITE,
    OwlmanState,
    OwlMove,
    index,
    is_light,
)
from pbmserv.robots.policy import sigmoid

#: The light squares in order: White's moves are listed by the square they start from.
LIGHT = tuple(square for square in range(64) if is_light(square))
#: White's pieces (a cell holds one character).
WHITE_PIECES = DOC + HELPER
#: The ply after which night has fallen (White's 49th move is ply 97).
NIGHTFALL_PLY = 2 * NIGHTFALL_MOVES - 1
#: The policy's score of a position where Doc cannot reach a8 before nightfall: 2% for White.
HOPELESS = math.log(0.02 / 0.98)
#: The score of a position with Doc taken (the game is over; a logistic gives it 0).
DOC_TAKEN = -50.0


def _shift(square: int, df: int, dr: int) -> int | None:
    """The square ``df`` files and ``dr`` ranks from ``square``, None off the board."""
    f, r = square % 8 + df, square // 8 + dr
    return r * 8 + f if 0 <= f < 8 and 0 <= r < 8 else None


def _steps_of_white(src: int) -> tuple[tuple[int, OwlMove], ...]:
    """Each diagonal step from ``src`` (never onto h1) with its move."""
    found = []
    for df, dr in DIAGONALS:
        dst = _shift(src, df, dr)
        if dst is not None and dst != H1:
            found.append((dst, OwlMove(src, dst, None)))
    return tuple(found)


#: The target square of each of Owlman's steps from a square, its move onto an empty square
#: that scares nobody, its move onto Doc (None but onto h1), and the squares further along the
#: step's diagonal with the move that scares away a helper there.
OwlStep = tuple[int, OwlMove, OwlMove | None, tuple[tuple[int, OwlMove], ...]]
#: A swoop's target, its move onto an empty square and its move onto Doc (None but onto h1).
OwlSwoop = tuple[int, OwlMove, OwlMove | None]


def _steps_of_owlman(src: int) -> tuple[OwlStep, ...]:
    found = []
    for df, dr in DIAGONALS:
        dst = _shift(src, df, dr)
        if dst is None:
            continue
        beyond = []
        square = _shift(dst, df, dr)
        while square is not None:
            beyond.append((square, OwlMove(src, dst, square)))
            square = _shift(square, df, dr)
        onto_doc = OwlMove(src, dst, H1) if dst == H1 else None
        found.append((dst, OwlMove(src, dst, None), onto_doc, tuple(beyond)))
    return tuple(found)


def _swoops_of_owlman(src: int) -> tuple[OwlSwoop, ...]:
    found = []
    for df, dr in CAMEL:
        dst = _shift(src, df, dr)
        if dst is not None:
            onto_doc = OwlMove(src, dst, H1) if dst == H1 else None
            found.append((dst, OwlMove(src, dst, None), onto_doc))
    return tuple(found)


WHITE_STEPS = {square: _steps_of_white(square) for square in LIGHT}
OWL_STEPS = {square: _steps_of_owlman(square) for square in LIGHT}
OWL_SWOOPS = {square: _swoops_of_owlman(square) for square in LIGHT}
#: From h1 Owlman must super swoop onto a helper: the move onto each square.
SUPER_SWOOPS = {square: OwlMove(H1, square, square) for square in LIGHT if square != H1}
#: Where Owlman stands to land on h1 next move (a step or a swoop): Doc there is threatened.
THREATENS_H1 = frozenset(
    square for square in LIGHT for step in OWL_STEPS[square] + OWL_SWOOPS[square] if step[0] == H1
)
#: Squares from which a helper steps onto b7 (Doc on a8 then wins), in order, and the steps.
B7_NEIGHBOURS = tuple(sorted(dst for dst, _ in WHITE_STEPS[B7]))
WIN_ONTO_B7 = {src: move for src in B7_NEIGHBOURS for dst, move in WHITE_STEPS[src] if dst == B7}
#: White's steps from each light square, in order, for the move lists.
WHITE_TABLE = tuple((square, WHITE_STEPS[square]) for square in LIGHT)
#: Doc's distance to a8 in moves, as the policy counts it.
DOC_DISTANCE = tuple(max(square % 8, 7 - square // 8) for square in range(64))


class OwlmanPosition:
    """A mutable Owlman position, changed by :meth:`OwlmanLean.push` and ``pop``."""

    __slots__ = (
        "cells",
        "doc",
        "helpers",
        "nightfall",
        "owl",
        "played",
        "ply",
        "stack",
        "winner",
    )

    def __init__(self, state: OwlmanState) -> None:
        self.cells = list(state.cells)
        self.ply = state.ply
        self.nightfall = state.variant == NIGHTFALL
        self.owl = self.cells.index(OWL)
        self.doc = state.cells.find(DOC)  # -1 once captured
        self.helpers = state.cells.count(HELPER)
        # Classic: the (cells, from, to) of the moves Owlman played (captures never repeat).
        self.played: set[tuple[str, int, int]] = set()
        for entry in state.played:
            cells, text = entry.split("|")
            self.played.add((cells, index(text[0:2]), index(text[3:5])))
        self.stack: list[tuple[Any, ...]] = []
        self.winner: int | None = None

    def key(self) -> tuple[Any, ...]:
        """Everything a pop must give back, to compare two positions."""
        return (
            "".join(self.cells),
            self.ply,
            self.nightfall,
            self.owl,
            self.doc,
            self.helpers,
            frozenset(self.played),
            len(self.stack),
            self.winner,
        )


class OwlmanLean:
    """The :class:`~pbmserv.robots.tactics.LeanPlay` of Owlman (both rule sets)."""

    def position(self, state: OwlmanState, rng: random.Random | None = None) -> OwlmanPosition:
        position = OwlmanPosition(state)
        position.winner = _judged(position)
        return position

    # --- moves -----------------------------------------------------------------------------

    def moves(self, position: OwlmanPosition) -> list[OwlMove]:
        """The legal moves, the likeliest best first: wins at once, then captures (Owlman) or
        Doc's moves (White)."""
        if position.ply % 2 == WHITE:
            moves = white_moves(position)
            doc = position.doc
            wins = _white_wins(position)
            first = wins + [m for m in moves if m.src == doc]
            return first + [m for m in moves if m.src != doc and m not in wins]
        moves = owlman_moves(position)
        return sorted(moves, key=_capture_order)

    def captures(self, position: OwlmanPosition) -> list[OwlMove]:
        """Owlman's captures (Doc first); White's only forcing moves, its wins at once."""
        if position.ply % 2 == WHITE:
            return _white_wins(position)
        # Captures are never repeats, so the classic rule leaves them all legal.
        found = [m for m in _owlman_pseudo_moves(position) if m.capture is not None]
        return sorted(found, key=_capture_order)

    def tree_moves(self, position: OwlmanPosition) -> list[OwlMove]:
        """The policy's candidates: a win at once if there is one; else, White with Doc
        threatened on h1, Doc's moves off it; else every move."""
        if position.ply % 2 == OWLMAN:
            moves = owlman_moves(position)
            return [m for m in moves if m.capture == H1] or moves
        wins = _white_wins(position)
        if wins:
            return wins
        moves = white_moves(position)
        if position.doc == H1 and position.owl in THREATENS_H1:
            return [m for m in moves if m.src == H1] or moves
        return moves

    def playout_move(self, position: OwlmanPosition, rng: random.Random) -> OwlMove | None:
        """The policy's chooser: a win at once; else White walks Doc nearer a8 half the time;
        else any move (None: the side to move has none)."""
        if position.ply % 2 == OWLMAN:
            moves = owlman_moves(position)
            if not moves:
                return None
            for move in moves:
                if move.capture == H1:
                    return move
            return moves[rng.randrange(len(moves))]
        # The chooser's steps, White's full list of moves made only when they come to it.
        wins = _white_wins(position)
        if wins:
            return wins[0]
        if rng.random() < 0.5:
            doc = position.doc
            if doc >= 0:
                cells, here = position.cells, DOC_DISTANCE[doc]
                nearer = [
                    move
                    for dst, move in WHITE_STEPS[doc]
                    if cells[dst] == EMPTY and DOC_DISTANCE[dst] < here
                ]
                if nearer:
                    return nearer[rng.randrange(len(nearer))]
        moves = white_moves(position)
        return moves[rng.randrange(len(moves))] if moves else None

    # --- playing ---------------------------------------------------------------------------

    def push(self, position: OwlmanPosition, move: OwlMove) -> None:
        src, dst, capture = move
        cells = position.cells
        piece = cells[src]
        taken = EMPTY
        played = position.played
        entry = None
        if capture is not None:
            taken = cells[capture]
            cells[capture] = EMPTY
            if taken == DOC:
                position.doc = -1
            else:
                position.helpers -= 1
            if played:  # no position before a capture can occur again
                position.played = set()
        elif piece == OWL and not position.nightfall:
            entry = ("".join(cells), src, dst)
            if entry in played:  # never for a legal move; then the pop must leave it
                entry = None
            else:
                played.add(entry)
        cells[dst] = piece
        cells[src] = EMPTY
        if piece == OWL:
            position.owl = dst
        elif piece == DOC:
            position.doc = dst
        position.ply += 1
        position.stack.append((move, piece, taken, played, entry, position.winner))
        position.winner = _judged(position)

    def pop(self, position: OwlmanPosition) -> None:
        move, piece, taken, played, entry, winner = position.stack.pop()
        src, dst, capture = move
        cells = position.cells
        cells[src] = piece
        cells[dst] = EMPTY
        if piece == OWL:
            position.owl = src
        elif piece == DOC:
            position.doc = src
        if capture is not None:
            cells[capture] = taken
            if taken == DOC:
                position.doc = capture
            else:
                position.helpers += 1
        if entry is not None:
            played.discard(entry)
        position.played = played
        position.ply -= 1
        position.winner = winner

    # --- results ---------------------------------------------------------------------------

    def seat(self, position: OwlmanPosition) -> int:
        return position.ply % 2

    def ended(self, position: OwlmanPosition) -> float | None:
        winner = position.winner
        if winner is None:
            return None
        return 1.0 if winner == position.ply % 2 else -1.0

    def no_moves(self, position: OwlmanPosition) -> float:
        # Never reached: a side without a move has lost (the rules judge it so when the move
        # before is pushed).
        return -1.0

    def evaluate(self, position: OwlmanPosition) -> float:
        """The policy's evaluation, its logistic's argument, for the side to move."""
        edge = white_edge(position)
        return edge if position.ply % 2 == WHITE else -edge

    def win_chance(self, position: OwlmanPosition) -> float:
        return sigmoid(self.evaluate(position))


def white_edge(position: OwlmanPosition) -> float:
    """White's prospects as the policy's evaluation scores them (its logistic's argument):
    the helpers left, Doc's distance to a8 and, at nightfall, the moves left."""
    doc = position.doc
    if doc < 0:
        return DOC_TAKEN
    distance = DOC_DISTANCE[doc]
    edge = 0.3 * (position.helpers - 6) - 0.4 * (distance - 2)
    if position.nightfall:
        left = NIGHTFALL_MOVES - (position.ply + 1) // 2
        if left < distance + 1:
            return HOPELESS
        edge -= 3.0 / max(1, left - distance)
    return edge


def white_moves(position: OwlmanPosition) -> list[OwlMove]:
    """White's moves, by the square they start from (the rules' order)."""
    cells = position.cells
    found = []
    for square, steps in WHITE_TABLE:
        if cells[square] in WHITE_PIECES:
            for dst, move in steps:
                if cells[dst] == EMPTY:
                    found.append(move)
    return found


def owlman_moves(position: OwlmanPosition) -> list[OwlMove]:
    """Owlman's legal moves, the classic repetitions left out (the rules' order)."""
    moves = _owlman_pseudo_moves(position)
    played = position.played
    if played:
        cells = "".join(position.cells)
        return [m for m in moves if (cells, m.src, m.dst) not in played]
    return moves


def _owlman_pseudo_moves(position: OwlmanPosition) -> list[OwlMove]:
    """Owlman's moves before the classic repetition rule: steps, then swoops."""
    cells, src = position.cells, position.owl
    if src == H1:  # the compulsory super swoop
        return [SUPER_SWOOPS[square] for square in LIGHT if cells[square] == HELPER]
    found = []
    for dst, quiet, onto_doc, beyond in OWL_STEPS[src]:
        target = cells[dst]
        if target == EMPTY:
            move = quiet
            for square, scares in beyond:
                piece = cells[square]
                if piece != EMPTY:
                    if piece == HELPER:
                        move = scares
                    break
            found.append(move)
        elif onto_doc is not None and target == DOC:
            found.append(onto_doc)
    for dst, quiet, onto_doc in OWL_SWOOPS[src]:
        target = cells[dst]
        if target == EMPTY:
            found.append(quiet)
        elif onto_doc is not None and target == DOC:
            found.append(onto_doc)
    return found


def _white_wins(position: OwlmanPosition) -> list[OwlMove]:
    """White's moves that win at once, by square: Doc on a8 and a helper onto b7 (Doc cannot
    reach a8 but from b7, so never a helper on b7 and Doc onto a8)."""
    cells = position.cells
    if cells[A8] == DOC and cells[B7] == EMPTY:
        return [WIN_ONTO_B7[src] for src in B7_NEIGHBOURS if cells[src] == HELPER]
    return []


def _capture_order(move: OwlMove) -> int:
    """Doc first, then the helpers, then the quiet moves (a stable sort keeps the rest)."""
    capture = move.capture
    return 2 if capture is None else (0 if capture == H1 else 1)


def _white_can_move(cells: list[str]) -> bool:
    for square, steps in WHITE_TABLE:
        if cells[square] in WHITE_PIECES:
            for dst, _ in steps:
                if cells[dst] == EMPTY:
                    return True
    return False


def _owlman_can_move(position: OwlmanPosition) -> bool:
    if position.played:
        return bool(owlman_moves(position))
    cells, src = position.cells, position.owl
    if src == H1:
        return position.helpers > 0
    for dst, _, onto_doc, _ in OWL_STEPS[src]:
        target = cells[dst]
        if target == EMPTY or (onto_doc is not None and target == DOC):
            return True
    for dst, _, onto_doc in OWL_SWOOPS[src]:
        target = cells[dst]
        if target == EMPTY or (onto_doc is not None and target == DOC):
            return True
    return False


def _judged(position: OwlmanPosition) -> int | None:
    """The winner, if the game is over: the rules' judgement, in their order."""
    if position.doc < 0 or position.helpers == 0:
        return OWLMAN
    cells = position.cells
    if cells[A8] == DOC and cells[B7] == HELPER:
        return WHITE
    to_move = position.ply % 2
    if to_move == OWLMAN and not _owlman_can_move(position):
        return WHITE
    if position.nightfall and position.ply >= NIGHTFALL_PLY:
        return OWLMAN
    if to_move == WHITE and not _white_can_move(cells):
        return OWLMAN
    return None
