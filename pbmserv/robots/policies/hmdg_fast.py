"""HMDG's playout and evaluation done on bit masks: the same results, far cheaper.

The robots search HMDG by IS-MCTS (:mod:`pbmserv.robots.mcts`): every iteration plays a short
uniform random playout from a determinisation and scores where it stops. Played through the
game contract, each playout move built the whole list of legal moves (up to 160
announcements, each a dataclass), a new state per move, and a scan of every earlier turn to
decide whether an announcement must be asked; the evaluation tried the 140 windows of five one
at a time. That was most of a robot's time.

:func:`fast_playout` plays the same playout on a few integers (each side's pieces and revealed
pieces, and the lines each side has placed in secret): the same moves, from the same draws of
the generator (one ``rng.randrange`` a move, over the same number of moves in the same order),
the same rules for answering, placing, passing and winning, and the same values at the end.
:func:`evaluate_position` counts the pieces in every window of five at once per direction, by
shifting the board and adding the shifted boards bit by bit (bit-sliced counters): the same
weighted sums, exactly, since they are sums of small whole numbers.

Both read only the state they are handed, which the search has already determinised for its
seat: they learn nothing that the ordinary playout would not.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import Final

from pbmserv.games.base import AnyGame
from pbmserv.games.hmdg.geometry import (
    _FIVE_STARTS,
    _THROUGH,
    FULL,
    ROW,
    SIZE,
    X_SIDE,
    _five_masks,
)
from pbmserv.games.hmdg.state import HmdgState
from pbmserv.robots.policy import Values, for_seat, sigmoid

#: Playout moves before the evaluation (the policy's cut-off).
PLAYOUT_PLIES: Final = 6

#: Each window's weight by the pieces of one side in it (0..5).
WINDOW_WEIGHT: Final = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)
# The same weights as whole numbers: the totals are summed exactly, then turned to floats.
_ONE, _TWO, _THREE, _FOUR, _FIVE = (int(weight) for weight in WINDOW_WEIGHT[1:])

_POINTS: Final = SIZE * SIZE
_ROW_MASKS: Final = tuple(((1 << SIZE) - 1) << row * SIZE for row in range(SIZE))
_COL_MASKS: Final = tuple(sum(1 << row * SIZE + col for row in range(SIZE)) for col in range(SIZE))
#: Per point, its row's mask and its column's mask (an announced line).
_LINES: Final = tuple((_ROW_MASKS[p // SIZE], _COL_MASKS[p % SIZE]) for p in range(_POINTS))
#: The points below ``n`` as a mask, for n = 0..81 (to find the n-th free point).
_BELOW: Final = tuple((1 << n) - 1 for n in range(_POINTS + 1))
#: Per point, the masks of the windows of five through it (a placement's new fives).
_FIVES_THROUGH: Final = tuple(tuple(window.mask for window in through) for through in _THROUGH)
#: For a line holding ``m`` hidden pieces of the answering side, its answers in the order the
#: game lists them (no piece, then each one, each two, ...), as positions among those pieces.
_ANSWERS: Final = tuple(
    tuple(chosen for k in range(m + 1) for chosen in combinations(range(m), k))
    for m in range(SIZE + 1)
)


def _windows_total(own: int, blocked: int) -> int:
    """The weights of the windows of five holding no ``blocked`` point, by the ``own`` pieces
    in each: per direction, the five shifted boards are added bit by bit into three bit planes
    (ones, twos, fours), so that every window's count is read at once."""
    total = 0
    for step, starts in _FIVE_STARTS:
        open_windows = starts & ~(
            blocked
            | blocked >> step
            | blocked >> 2 * step
            | blocked >> 3 * step
            | blocked >> 4 * step
        )
        if not open_windows:
            continue
        first = own & open_windows
        second = own >> step & open_windows
        ones = first ^ second
        twos = first & second
        fours = 0
        for shift in (2 * step, 3 * step, 4 * step):
            piece = own >> shift & open_windows
            carry = ones & piece
            ones ^= piece
            fours |= twos & carry
            twos ^= carry
        if not ones | twos | fours:
            continue
        total += (
            _ONE * (ones & ~(twos | fours)).bit_count()
            + _TWO * (twos & ~(ones | fours)).bit_count()
            + _THREE * (ones & twos).bit_count()
            + _FOUR * (fours & ~ones).bit_count()
            + _FIVE * (fours & ones).bit_count()
        )
    return total


def _x_value(pieces: tuple[int, int] | list[int], shown: tuple[int, int] | list[int]) -> float:
    """X's value: the windows each side could still fill, steeply weighted by their pieces."""
    x_total = _windows_total(pieces[0], shown[1])
    o_total = _windows_total(pieces[1], shown[0])
    return sigmoid((x_total - o_total) / 40.0)


def evaluate_position(game: AnyGame, state: HmdgState) -> Values:
    """The policy's evaluation of a position that has not ended (see the policy module): a
    draw before the sides are chosen."""
    if state.x_seat is None:
        return (0.5, 0.5)
    return for_seat(state.x_seat, _x_value(state.pieces, state.shown))


def _nth_point(mask: int, index: int) -> int:
    """The ``index``-th point (from 0, lowest first) of ``mask``: a binary search on how many
    points lie below."""
    low, high = 0, _POINTS  # the point is in low .. high - 1
    while high - low > 1:
        middle = (low + high) // 2
        if (mask & _BELOW[middle]).bit_count() > index:
            high = middle
        else:
            low = middle
    return low


def _secret_lines(state: HmdgState) -> list[int]:
    """Per side, the lines of its turns placed in secret (what ``rules.may_hide_in`` reads):
    an announcement into none of them, of a side with hidden pieces only there, is answered
    "none" at once."""
    lines = [0, 0]
    for turn in state.turns:
        if turn.placed and not turn.revealed:
            lines[turn.side] |= _LINES[turn.point][turn.line != ROW]
    return lines


def _wins(pieces: int, point: int) -> bool:
    """Whether a five through ``point`` and another five share at most one point (the rules'
    double five; ``pieces`` holds a five through ``point``)."""
    every = _five_masks(pieces)
    bit = 1 << point
    return any((one & other).bit_count() <= 1 for one in every if one & bit for other in every)


def fast_playout(game: AnyGame, state: HmdgState, rng: random.Random) -> Values | None:
    """The policy's playout (uniform random moves for :data:`PLAYOUT_PLIES` moves, then the
    evaluation) on bit masks; None before the sides are chosen (the ordinary playout then)."""
    x_seat = state.x_seat
    if state.result is not None or x_seat is None:
        return None
    pieces, shown = list(state.pieces), list(state.shown)
    mover = state.mover
    # The announcement waiting for its answer: its point and line (a mask).
    asking = state.pending is not None
    point = line = 0
    if state.pending is not None:
        point = state.pending.point
        line = _LINES[point][state.pending.line != ROW]
    # The secret lines of the state's turns (read only when needed), and of the playout's.
    old_secret_lines: list[int] | None = None
    new_secret_lines = [0, 0]
    for _ in range(PLAYOUT_PLIES):
        other = 1 - mover
        hidden = pieces[other] & ~shown[other]
        if not asking:
            # An announcement: the moves are each free point with its row, then its column.
            free = FULL & ~pieces[mover] & ~(shown[0] | shown[1])
            choice = rng.randrange(2 * free.bit_count())
            point = _nth_point(free, choice >> 1)
            line = _LINES[point][choice & 1]
            # Asked unless the line publicly holds no hidden piece of the other side's.
            if hidden and not hidden & line:
                if old_secret_lines is None:
                    old_secret_lines = _secret_lines(state)
                asking = bool((old_secret_lines[other] | new_secret_lines[other]) & line)
            else:
                asking = bool(hidden & line)
            if asking:
                continue  # the answer is the next move
            wanted = 0  # "none", answered at once
        else:
            # The answer: any set of the answering side's hidden pieces on the line.
            mine = hidden & line
            count = mine.bit_count()
            answer = _ANSWERS[count][rng.randrange(1 << count)]
            wanted = 0
            for position in answer:
                wanted |= 1 << _nth_point(mine, position)
            asking = False
        bit = 1 << point
        shown[other] |= wanted
        if not bit & wanted:  # placed
            pieces[mover] |= bit
            if wanted:
                shown[mover] |= bit  # anything revealed reveals the mover's point too
            else:
                new_secret_lines[mover] |= line
            own = pieces[mover]
            if any(five & own == five for five in _FIVES_THROUGH[point]) and _wins(own, point):
                winner = x_seat if mover == X_SIDE else 1 - x_seat
                return (1.0, 0.0) if winner == 0 else (0.0, 1.0)
        revealed = shown[0] | shown[1]
        if FULL & ~pieces[other] & ~revealed:
            mover = other
        elif not FULL & ~pieces[mover] & ~revealed:
            return (0.5, 0.5)  # nobody has a point left: a draw
        # else the other side has no point left: the mover goes again
    # Stopped with an announcement unanswered, its piece is not on the board yet.
    return for_seat(x_seat, _x_value(pieces, shown))
