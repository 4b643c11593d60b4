"""The robots' policy for Chameleon.

Hex with either colour for either side. Random playouts on 11x11 lose every game to a greedy
player that shortens its chain (measured: 0 of 8 at 1600 iterations, random fills of the board
as playouts); the search instead scores each new position by how many empty cells each side's
shortest chain still needs (a race: the side to move is a tempo ahead), backs those scores up as
a minimax beside the means, and considers only the moves on or next to those chains, a
completing move or a block alone when there is one (16 of 16 against greedy with the same
budget, exploration 0.4).

The tree runs on the lean position of :mod:`~pbmserv.robots.policies.chameleon_lean` (pushed
and popped in place; the races of :mod:`~pbmserv.robots.policies.chameleon_races` read on bit
masks a layer of cells at a time): an iteration costs 83 microseconds on 11x11 where it cost
234 through ``apply`` and a cell-by-cell search (L3's trees; measured on positions of robot
games). The levels spent that on two and a half times
the iterations until the tree widened (below), which kept L3's CPU a move a little under what
it was (L1 and L2 well under: the search's own bookkeeping grows with the tree). The tactics
only take a win at once, in place of the robots' check for one. The evaluation and candidates
below serve a search on the rule module's states; they read the state's cells (not ``dump()``)
and share the lean position's races, with the same results as the cell-by-cell search had.

The candidates come best first: each cell's piece that helps the mover's chains or blocks the
opponent's (:func:`~pbmserv.robots.policies.chameleon_races.x_gain`), its other piece last, and
the tree widens progressively in that order (``widen``: a node of ``n`` visits has at most
``2 * sqrt(n + 1)`` children) where it took every candidate in at once, a hundred a node, two
plies deep at most. It now reads several plies deep on the best few; each new node's
candidates cost more than the iterations it saves, so the levels spend 1.6 times the ladder's
iterations where they spent 2.5. Against 020b28e's L3: 23/0/17 (57%) before, 32/0/8 (80%)
after, at 1,062 ms a move against its 1,153 (bench/results, session 12).

At the ladder's bare 50 and 400 iterations the player to move second won every game of L2
against L1 (the weaker robot's greedy replies hold a race in which the side to move is a tempo
ahead); three times the iterations, or the lower levels' temperatures (levels.py), separate
them. The robot never swaps: a piece is anyone's in Chameleon, so a first piece gives the first
player nothing of their own and a swap only hands the move back (on 3x3, solved, the player to
move after any first piece wins); the evaluation scores every first piece alike for both roles,
and the tempo decides.
"""

from __future__ import annotations

import math
import random
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.chameleon import ChameleonState
from pbmserv.robots.policies.chameleon_lean import TACTICS
from pbmserv.robots.policies.chameleon_races import (
    BitBoard,
    Group,
    bit_board,
    board_masks,
    chain_cells,
    groups_of,
    race_chance,
    urgent_moves,
    x_gain,
)
from pbmserv.robots.policy import Policy, Values, for_seat


def _board_groups(state: ChameleonState) -> tuple[BitBoard, list[list[Group]], int]:
    """The board's masks, each colour's groups (indexed by cell code) and the empty cells."""
    board = bit_board(state.size)
    x, o, empty = board_masks(state)
    return board, [[], groups_of(x, board.stride), groups_of(o, board.stride)], empty


def _chameleon_candidates(
    game: AnyGame, state: ChameleonState, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """The moves that matter now: a move that completes a chain if there is one; else the
    blocks of the opponent's chain that lacks one cell, if it has one; else both pieces on the
    empty cells of each side's shortest chains and of those one cell longer, the pieces that
    gain the mover most first (``x_gain``), then those nearest the centre, ties in a random
    order (so that a robot does not play the same game every time)."""
    board, groups, empty = _board_groups(state)
    found = chain_cells(board, groups, empty, seat == state.vert_seat)
    urgent = urgent_moves(board, found)
    if urgent:
        return urgent
    bits, centre, size = board.bits, board.centre, board.size
    chained = found.rank0 | found.rank1
    kept: list[tuple[float, int, float, int, Any]] = []
    for index, move in enumerate(moves):
        if isinstance(move, str):  # the swap, kept and tried first
            kept.append((-math.inf, 0, 0.0, index, move))
            continue
        draw = rng.random()  # every piece draws, kept or not: the generator's use is fixed
        cell = move.row * size + move.col
        bit = bits[cell]
        if chained & bit:
            gain = x_gain(found, bit) if move.piece == "x" else -x_gain(found, bit)
            kept.append((-gain, centre[cell], draw, index, move))
    kept.sort()
    return [move for *_, move in kept]


def _chameleon_evaluate(game: AnyGame, state: ChameleonState) -> Values:
    """A race: who is nearer a chain, in empty cells to fill (each side's better colour), the
    side to move a tempo ahead; one cell short of a chain on the move is a win."""
    board, groups, empty = _board_groups(state)
    mover = state.ply % 2
    return for_seat(mover, race_chance(board, groups, empty, mover == state.vert_seat))


POLICY = Policy(
    evaluate=_chameleon_evaluate,
    cutoff=0,
    candidates=_chameleon_candidates,
    ordered=True,
    minimax_weight=0.5,
    exploration=0.4,
    tactics=TACTICS,
    lean_tree=True,
    iteration_scale=1.6,
    widen=2.0,
)
