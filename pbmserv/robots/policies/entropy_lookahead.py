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
from functools import lru_cache
from typing import Any

from pbmserv.games.entropy.score import line_score
from pbmserv.games.entropy.state import square_rays
from pbmserv.robots.policies.entropy_fast import bag_of

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


def _chaos_square(cells: bytearray, size: int, colour: int, rng: random.Random) -> int:
    empties = [i for i, c in enumerate(cells) if not c]
    best, best_gain = -1, 0
    for _ in range(CHAOS_CHOICES):
        cell = empties[rng.randrange(len(empties))]
        gain = place_gain(cells, size, cell, colour)
        if best < 0 or gain < best_gain:
            best, best_gain = cell, gain
    return best


def _order_slide(cells: bytearray, size: int, rng: random.Random) -> tuple[int, int] | None:
    rays = square_rays(size)
    held = [i for i, c in enumerate(cells) if c]
    if not held:
        return None
    best, best_gain = None, 0
    for _ in range(ORDER_CHOICES):
        src = held[rng.randrange(len(held))]
        ray = rays[src][rng.randrange(4)]
        reach = 0
        for square in ray:
            if cells[square]:
                break
            reach += 1
        if not reach:
            continue
        dst = ray[rng.randrange(reach)]
        gain = slide_gain(cells, size, src, dst)
        if gain > best_gain:
            best, best_gain = (src, dst), gain
    return best


def _order_moves(cells: bytearray, size: int, rng: random.Random) -> None:
    slide = _order_slide(cells, size, rng)
    if slide is not None:
        src, dst = slide
        cells[dst], cells[src] = cells[src], 0


def played_then_dealt(state: Any, rng: random.Random, turns: int) -> bytearray:
    """The round's board after ``turns`` turns of the simple players, then the rest dealt."""
    size = state.size
    cells = bytearray(state.cells)
    bag = bag_of(state.cells, size)
    if state.drawn:  # Chaos's counter, drawn already
        bag.remove(state.drawn)
        cells[_chaos_square(cells, size, state.drawn, rng)] = state.drawn
    _order_moves(cells, size, rng)
    for _ in range(turns):
        if not bag:
            return cells
        at = rng.randrange(len(bag))
        colour = bag[at]
        bag[at] = bag[-1]
        bag.pop()
        cells[_chaos_square(cells, size, colour, rng)] = colour
        _order_moves(cells, size, rng)
    rng.shuffle(bag)
    empties = [i for i, c in enumerate(cells) if not c]
    for square, colour in zip(empties, bag, strict=True):
        cells[square] = colour
    return cells
