"""HMDG's tree candidates (pbmserv.robots.policies.hmdg): the announcements on the points where
the mover's piece adds most to the windows of five it could still fill."""

from __future__ import annotations

import random

from pbmserv.games import all_games
from pbmserv.games.hmdg import GAME
from pbmserv.games.hmdg.geometry import ROWS, SIZE, WINDOWS, mask_of
from pbmserv.games.hmdg.state import Announce, HmdgState, Reveal
from pbmserv.robots.levels import level_policy
from pbmserv.robots.policies import policy_for
from pbmserv.robots.policies.hmdg import CANDIDATE_POINTS, points_by_gain
from pbmserv.robots.policy import Policy


def _point(name: str) -> int:
    return ROWS.index(name[0]) * SIZE + int(name[1:]) - 1


def _open_windows_total(own: int, blocked: int) -> float:
    weights = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)
    return sum(
        weights[(own & window.mask).bit_count()] for window in WINDOWS if not window.mask & blocked
    )


def test_four_in_a_row_is_finished_first_and_a_revealed_piece_closes_its_end() -> None:
    own = mask_of(_point(name) for name in ("C3", "C4", "C5", "C6"))
    assert set(points_by_gain(own, 0)[:2]) == {_point("C2"), _point("C7")}
    # O's revealed piece on C7 kills every window through it: C2 alone completes a five.
    assert points_by_gain(own, mask_of([_point("C7")]))[0] == _point("C2")


def test_the_order_is_by_what_a_piece_adds_to_the_open_windows() -> None:
    rng = random.Random(5)
    for _ in range(20):
        own = mask_of(rng.sample(range(SIZE * SIZE), 6))
        blocked = mask_of(rng.sample(range(SIZE * SIZE), 4)) & ~own
        before = _open_windows_total(own, blocked)
        added = [
            _open_windows_total(own | 1 << point, blocked) - before
            for point in points_by_gain(own, blocked)
            if not own >> point & 1
        ]
        assert added == sorted(added, reverse=True)


def _played(texts: list[str]) -> HmdgState:
    state = GAME.new_game({}, random.Random(0))
    for text in texts:
        seat = min(GAME.to_move(state).seats)
        state = GAME.apply(state, GAME.parse_move(state, seat, text), random.Random(0))
    return state


def test_the_tree_announces_on_the_best_points_row_and_column_each() -> None:
    policy: Policy = policy_for(GAME)
    state = _played(["E5", "o", "D4 row"])  # O has one piece; X (the opener's E5) is to move
    seat = min(GAME.to_move(state).seats)
    legal = GAME.legal_moves(state, seat)
    assert len(legal) > 2 * CANDIDATE_POINTS
    chosen = policy.tree_moves(GAME, state, seat, legal, random.Random(0))
    assert all(isinstance(move, Announce) for move in chosen)
    points = list(dict.fromkeys(move.point for move in chosen))
    assert len(chosen) == 2 * CANDIDATE_POINTS and len(points) == CANDIDATE_POINTS
    mover = state.mover
    free = {move.point for move in legal if isinstance(move, Announce)}
    best = [
        point
        for point in points_by_gain(state.pieces[mover], state.shown[1 - mover])
        if point in free
    ]
    assert points == best[:CANDIDATE_POINTS]
    assert _point("E5") not in points  # the mover's own piece stands there


def test_every_answer_stays_in_the_tree() -> None:
    policy: Policy = policy_for(GAME)
    state = _played(["E5", "o", "D4 row", "D6 row"])  # X announced row D: O hides D4 there
    seat = min(GAME.to_move(state).seats)
    legal = GAME.legal_moves(state, seat)
    assert legal and all(isinstance(move, Reveal) for move in legal)
    assert policy.tree_moves(GAME, state, seat, legal, random.Random(0)) == legal


def test_level_one_searches_every_announcement_and_the_others_the_candidates() -> None:
    # L1's 110 iterations on the ten best points played almost as well as L2 (the ladder
    # stalled at 65%): below candidates_from_level the tree takes every legal move.
    assert level_policy(GAME, 1).candidates is None
    for level in (2, 3):
        assert level_policy(GAME, level) is policy_for(GAME)
        assert policy_for(GAME).candidates is not None
    for game in all_games():
        if game.SPEC.name != GAME.SPEC.name:
            assert level_policy(game, 1) is policy_for(game)
