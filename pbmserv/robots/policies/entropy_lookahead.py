"""Entropy's playout with Order in it: the next few turns are played by two simple players
before the rest of the bag is dealt at random.

Dealt at once, a playout has Order never slide: every position is judged as if Order had
stopped playing, which the search's own Order moves then have to make up for. Here each of the
next ``turns`` turns draws a counter, Chaos puts it on the square (of a few drawn at random)
where it gives Order the fewest points at once, and Order makes the slide (of a few drawn at
random) that gains it the most points at once, or passes when none gains any. The points of a
move are read from the lines it changes, each line's change kept once seen (``put_points``,
``take_points``, ``shift_points``).
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pbmserv.games.entropy.score import line_score
from pbmserv.games.entropy.state import square_rays
from pbmserv.robots.policies.entropy_fast import bag_of, deal_into

#: Squares Chaos weighs for a counter, and slides Order weighs, in a playout's turn.
CHAOS_CHOICES = 3
ORDER_CHOICES = 4


@lru_cache(maxsize=1 << 16)
def put_points(line: bytes, at: int, colour: int) -> int:
    """The points a line gains when ``colour`` is put on its empty square ``at``."""
    return line_score(line[:at] + bytes((colour,)) + line[at + 1 :]) - line_score(line)


@lru_cache(maxsize=1 << 16)
def take_points(line: bytes, at: int) -> int:
    """The points a line gains (a loss: negative) when the counter on ``at`` leaves it."""
    return line_score(line[:at] + b"\0" + line[at + 1 :]) - line_score(line)


@lru_cache(maxsize=1 << 16)
def shift_points(line: bytes, src: int, dst: int) -> int:
    """The points a line gains when its counter on ``src`` slides to ``dst`` along it."""
    after = bytearray(line)
    after[dst], after[src] = line[src], 0
    return line_score(bytes(after)) - line_score(line)


def place_gain(cells: bytes | bytearray, size: int, cell: int, colour: int) -> int:
    """Order's points gained at once when ``colour`` is put on the empty ``cell``."""
    row, column = divmod(cell, size)
    across = bytes(cells[row * size : row * size + size])
    return put_points(across, column, colour) + put_points(bytes(cells[column::size]), row, colour)


def slide_gain(cells: bytes | bytearray, size: int, src: int, dst: int) -> int:
    """Order's points gained at once by sliding the counter on ``src`` to ``dst``."""
    (row, column), (to_row, to_column) = divmod(src, size), divmod(dst, size)
    colour = cells[src]
    if row == to_row:  # along its row: one column loses the counter, another gains it
        across = bytes(cells[row * size : row * size + size])
        return (
            shift_points(across, column, to_column)
            + take_points(bytes(cells[column::size]), row)
            + put_points(bytes(cells[to_column::size]), row, colour)
        )
    down = bytes(cells[column::size])  # along its column: one row loses it, another gains it
    return (
        shift_points(down, row, to_row)
        + take_points(bytes(cells[row * size : row * size + size]), column)
        + put_points(bytes(cells[to_row * size : to_row * size + size]), column, colour)
    )


def below(rng: random.Random) -> Callable[[int], int]:
    """``rng.randrange`` of one bound, drawing the same numbers: for the library's generator,
    its own ``_randbelow`` inlined (the playout draws a dozen numbers a turn, and the call
    through ``randrange``'s checks cost more than the draw); any other generator, its own."""
    if type(rng) is not random.Random:
        return rng.randrange
    getrandbits = rng.getrandbits

    def draw(n: int) -> int:
        bits = n.bit_length()
        r = getrandbits(bits)
        while r >= n:
            r = getrandbits(bits)
        return r

    return draw


class _Board:
    """A playout's board, with its empty and its held squares kept in order as it changes
    (listed afresh, they cost more than the turn's choices)."""

    def __init__(self, cells: bytes, size: int, draw: Callable[[int], int]) -> None:
        self.cells, self.size, self.draw = bytearray(cells), size, draw
        self.empties = [i for i, c in enumerate(cells) if not c]
        self.held = [i for i, c in enumerate(cells) if c]

    def chaos_puts(self, colour: int) -> None:
        """Chaos's counter on the square, of a few drawn, that gives Order the fewest points."""
        cells, size, empties, draw = self.cells, self.size, self.empties, self.draw
        board = bytes(cells)
        best, best_gain = -1, 0
        for _ in range(CHAOS_CHOICES):
            cell = empties[draw(len(empties))]
            gain = place_gain(board, size, cell, colour)
            if best < 0 or gain < best_gain:
                best, best_gain = cell, gain
        cells[best] = colour
        empties.remove(best)
        insort(self.held, best)

    def order_slides(self) -> None:
        """Order's slide, of a few drawn, that gains it the most points at once; or a pass."""
        cells, size, held, draw = self.cells, self.size, self.held, self.draw
        if not held:
            return
        rays = square_rays(size)
        board = bytes(cells)
        best, best_gain = None, 0
        for _ in range(ORDER_CHOICES):
            src = held[draw(len(held))]
            ray = rays[src][draw(4)]
            reach = 0
            for square in ray:
                if board[square]:
                    break
                reach += 1
            if not reach:
                continue
            dst = ray[draw(reach)]
            gain = slide_gain(board, size, src, dst)
            if gain > best_gain:
                best, best_gain = (src, dst), gain
        if best is not None:
            src, dst = best
            cells[dst], cells[src] = cells[src], 0
            held.remove(src)
            insort(held, dst)
            self.empties.remove(dst)
            insort(self.empties, src)


def played_then_dealt(state: Any, rng: random.Random, turns: int) -> bytearray:
    """The round's board after ``turns`` turns of the simple players, then the rest dealt."""
    draw = below(rng)
    board = _Board(state.cells, state.size, draw)
    bag = bag_of(state.cells, state.size)
    if state.drawn:  # Chaos's counter, drawn already
        bag.remove(state.drawn)
        board.chaos_puts(state.drawn)
    board.order_slides()
    for _ in range(turns):
        if not bag:
            return board.cells
        at = draw(len(bag))
        colour = bag[at]
        bag[at] = bag[-1]
        bag.pop()
        board.chaos_puts(colour)
        board.order_slides()
    deal_into(board.cells, board.empties, bag, rng)
    return board.cells
