"""The hex board's geometry (pbmserv.games.chameleon.geometry), which the game's union-find and
the robots' policy both read: neighbours, sides and distances from the centre."""

from __future__ import annotations

from collections import deque

import pytest

from pbmserv.games.chameleon.geometry import (
    BOTTOM,
    LEFT,
    LEFT_RIGHT,
    RIGHT,
    STEPS,
    TOP,
    TOP_BOTTOM,
    centre_distances,
    hex_geometry,
)


def test_a_small_board_by_hand() -> None:
    # 3x3, cells row by row: 0 1 2 / 3 4 5 / 6 7 8, each row half a cell right of the one above.
    geometry = hex_geometry(3)
    assert geometry.neighbours[4] == (3, 5, 1, 2, 7, 6)  # the centre has all six
    assert geometry.neighbours[0] == (1, 3)  # the acute corner has two
    assert geometry.neighbours[2] == (1, 5, 4)  # the obtuse corner has three
    assert geometry.edges == bytes(
        [TOP | LEFT, TOP, TOP | RIGHT, LEFT, 0, RIGHT, BOTTOM | LEFT, BOTTOM, BOTTOM | RIGHT]
    )
    assert geometry.earlier[4] == (3, 1, 2)
    assert (TOP_BOTTOM, LEFT_RIGHT) == (TOP | BOTTOM, LEFT | RIGHT)


@pytest.mark.parametrize("size", [3, 4, 11, 26])
def test_neighbours_are_mutual_and_earlier_is_the_lower_half(size: int) -> None:
    geometry = hex_geometry(size)
    assert len(geometry.neighbours) == len(geometry.edges) == size * size
    for cell, near in enumerate(geometry.neighbours):
        assert cell not in near and len(set(near)) == len(near) <= len(STEPS)
        assert all(cell in geometry.neighbours[other] for other in near)
        assert geometry.earlier[cell] == tuple(n for n in near if n < cell)
    assert hex_geometry(size) is geometry  # worked out once a size


@pytest.mark.parametrize("size", [3, 4, 7, 11])
def test_centre_distance_is_the_number_of_steps_from_the_centre(size: int) -> None:
    neighbours = hex_geometry(size).neighbours
    middle = (size - 1) // 2
    start = middle * size + middle
    steps = {start: 0}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        for other in neighbours[cell]:
            if other not in steps:
                steps[other] = steps[cell] + 1
                queue.append(other)
    assert centre_distances(size) == tuple(steps[cell] for cell in range(size * size))
