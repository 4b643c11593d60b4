"""The robots' policy for Chameleon.

Hex with either colour for either side. Random playouts on 11x11 lose every game to a greedy
player that shortens its chain (measured: 0 of 8 at 1600 iterations, random fills of the board
as playouts); the search instead scores each new position by how many empty cells each side's
shortest chain still needs (a race: the side to move is a tempo ahead), backs those scores up as
a minimax beside the means, and considers only the moves on or next to those chains, a
completing move or a block alone when there is one (16 of 16 against greedy with the same
budget, exploration 0.4). The board is read through dump().

At the ladder's bare 50 and 400 iterations the player to move second won every game of L2
against L1 (the weaker robot's greedy replies hold a race in which the side to move is a tempo
ahead); three times the iterations, or the lower levels' temperatures (levels.py), separate
them. The robot never swaps: a piece is anyone's in Chameleon, so a first piece gives the first
player nothing of their own and a swap only hands the move back (on 3x3, solved, the player to
move after any first piece wins); the evaluation scores every first piece alike for both roles,
and the tempo decides.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.chameleon.geometry import (
    BOTTOM,
    LEFT,
    LEFT_RIGHT,
    RIGHT,
    TOP,
    TOP_BOTTOM,
    centre_distances,
    hex_geometry,
)
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid


def _chameleon_board(game: AnyGame, state: Any) -> tuple[int, list[int], int, int]:
    """Size, cells (0 empty, 1 x, 2 o), the seat playing Vert, and the seat to move."""
    data = game.dump(state)
    cells = [".xo".index(ch) for ch in "".join(data["board"])]
    return data["size"], cells, 1 if data["swapped"] else 0, data["ply"] % 2


def _hex_distance(size: int, cells: list[int], colour: int, axis: int) -> int:
    """Empty cells still needed for a chain of ``colour`` joining the sides of ``axis``."""
    start, goal = (TOP, BOTTOM) if axis == TOP_BOTTOM else (LEFT, RIGHT)
    return _chain_search(size, cells, colour, start, goal)[1]


def _distances(size: int, cells: list[int], colour: int, start: int) -> list[int]:
    """Per cell, the empty cells a chain of ``colour`` from the ``start`` side needs to reach it
    (itself included); a cell of the other colour is out of reach."""
    return _chain_search(size, cells, colour, start, 0)[0]


def _chain_search(
    size: int, cells: list[int], colour: int, start: int, goal: int
) -> tuple[list[int], int]:
    """A 0-1 breadth-first search from the ``start`` side over cells empty (cost 1) or of
    ``colour`` (cost 0): the distances, and the distance to the ``goal`` side, where it stops
    (with no goal it goes on to every cell; the distance is then out of reach)."""
    neighbours, edge_bits = hex_geometry(size)[:2]
    far = size * size + 1
    dist = [far] * (size * size)
    queue: deque[int] = deque()
    for i, bits in enumerate(edge_bits):
        if bits & start and cells[i] in (0, colour):
            dist[i] = 0 if cells[i] else 1
            if cells[i]:
                queue.appendleft(i)
            else:
                queue.append(i)
    while queue:
        i = queue.popleft()
        if edge_bits[i] & goal:
            return dist, dist[i]
        here = dist[i]
        for n in neighbours[i]:
            code = cells[n]
            if code and code != colour:
                continue
            d = here + (0 if code else 1)
            if d < dist[n]:
                dist[n] = d
                if code:
                    queue.appendleft(n)
                else:
                    queue.append(n)
    return dist, far


#: How many cells longer than the shortest a chain may be for its cells to be candidates.
_CHAMELEON_SLACK = 1


def _chameleon_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """The moves that matter now: a move that completes a chain if there is one; else the
    blocks of the opponent's chain that lacks one cell, if it has one; else both pieces on the
    empty cells of each side's shortest chains and of those one cell longer, the shortest
    chains' cells first, then those nearest the centre, ties in a random order (so that a
    robot does not play the same game every time)."""
    size, cells, vert_seat, _ = _chameleon_board(game, state)
    # through[side][colour - 1][cell]: the empty cells a chain of that side and colour through
    # the cell needs (side 0 Vert, 1 Horz).
    through: list[list[list[int]]] = []
    for start, goal in ((TOP, BOTTOM), (LEFT, RIGHT)):
        per_colour = []
        for colour in (1, 2):
            ahead = _distances(size, cells, colour, start)
            behind = _distances(size, cells, colour, goal)
            per_colour.append(
                [
                    a + b - (0 if code else 1)
                    for a, b, code in zip(ahead, behind, cells, strict=True)
                ]
            )
        through.append(per_colour)
    mine = 0 if seat == vert_seat else 1
    places = [m for m in moves if not isinstance(m, str)]

    def needs(side: int, move: Any, colour: int) -> int:
        return through[side][colour - 1][move.row * size + move.col]

    wins = [m for m in places if needs(mine, m, _PIECE[m.piece]) == 1]
    if wins:
        return wins
    # Their one missing cell: only the other piece there blocks (their piece would complete it).
    blocks = [m for m in places if needs(1 - mine, m, 3 - _PIECE[m.piece]) == 1]
    if blocks:
        return blocks
    slack = [_CHAMELEON_SLACK + 1] * (size * size)
    for per_colour in through:
        best = min(min(lengths) for lengths in per_colour)
        for lengths in per_colour:
            for i, length in enumerate(lengths):
                if not cells[i]:
                    slack[i] = min(slack[i], length - best)
    centre = centre_distances(size)
    kept = [
        (0, 0, 0.0, index, m)
        if isinstance(m, str)
        else (slack[m.row * size + m.col], centre[m.row * size + m.col], rng.random(), index, m)
        for index, m in enumerate(moves)
    ]
    return [m for rank, _, _, _, m in sorted(kept) if rank <= _CHAMELEON_SLACK]


_PIECE = {"x": 1, "o": 2}


def _chameleon_evaluate(game: AnyGame, state: Any) -> Values:
    """A race: who is nearer a chain, in empty cells to fill (each side's better colour), the
    side to move a tempo ahead; one cell short of a chain on the move is a win."""
    size, cells, vert_seat, mover = _chameleon_board(game, state)
    vert = min(_hex_distance(size, cells, colour, TOP_BOTTOM) for colour in (1, 2))
    horz = min(_hex_distance(size, cells, colour, LEFT_RIGHT) for colour in (1, 2))
    mine, theirs = (vert, horz) if mover == vert_seat else (horz, vert)
    value = 0.99 if mine <= 1 else sigmoid(theirs - mine + 0.5)
    return for_seat(mover, value)


POLICY = Policy(
    evaluate=_chameleon_evaluate,
    cutoff=0,
    candidates=_chameleon_candidates,
    ordered=True,
    minimax_weight=0.5,
    exploration=0.4,
)
