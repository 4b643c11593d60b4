"""Chameleon's lean position against the rules, and its races against the cell-by-cell search
the policy used before (kept here as the reference): the same moves, the same ends (the winner
included) after every move, a pop that gives the position back, and the same evaluation and
candidates."""

from __future__ import annotations

import math
import random
from collections import deque
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.chameleon import SWAP, ChameleonState, Place
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
from pbmserv.robots.policies import policy_for
from pbmserv.robots.policies.chameleon import _chameleon_candidates, _chameleon_evaluate
from pbmserv.robots.policies.chameleon_lean import LEAN, TACTICS, ChameleonPosition
from pbmserv.robots.policy import Values, for_seat, sigmoid
from pbmserv.robots.tactics import DECIDED, LeanPlay, root_scores

GAME = find_game("chameleon")

# --- the reference: the policy as it was, reading dump() and searching cell by cell ----------


def _reference_board(state: ChameleonState) -> tuple[int, list[int], int, int]:
    assert GAME is not None
    data = GAME.dump(state)
    cells = [".xo".index(ch) for ch in "".join(data["board"])]
    return data["size"], cells, 1 if data["swapped"] else 0, data["ply"] % 2


def _reference_search(
    size: int, cells: list[int], colour: int, start: int, goal: int
) -> tuple[list[int], int]:
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


def _reference_distance(size: int, cells: list[int], colour: int, axis: int) -> int:
    start, goal = (TOP, BOTTOM) if axis == TOP_BOTTOM else (LEFT, RIGHT)
    return _reference_search(size, cells, colour, start, goal)[1]


def _reference_candidates(
    state: ChameleonState, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    return _reference_ranked(state, seat, moves, rng)[0]


def _reference_ranked(
    state: ChameleonState, seat: int, moves: list[Any], rng: random.Random
) -> tuple[list[Any], dict[Any, tuple[int, int]] | None]:
    """The candidates, and each one's gain (negated) and distance from the centre (None for the
    wins or the blocks)."""
    size, cells, vert_seat, _ = _reference_board(state)
    through: list[list[list[int]]] = []
    for start, goal in ((TOP, BOTTOM), (LEFT, RIGHT)):
        per_colour = []
        for colour in (1, 2):
            ahead = _reference_search(size, cells, colour, start, 0)[0]
            behind = _reference_search(size, cells, colour, goal, 0)[0]
            per_colour.append(
                [
                    a + b - (0 if code else 1)
                    for a, b, code in zip(ahead, behind, cells, strict=True)
                ]
            )
        through.append(per_colour)
    mine = 0 if seat == vert_seat else 1
    places = [m for m in moves if not isinstance(m, str)]
    piece = {"x": 1, "o": 2}

    def needs(side: int, move: Any, colour: int) -> int:
        return through[side][colour - 1][move.row * size + move.col]

    wins = [m for m in places if needs(mine, m, piece[m.piece]) == 1]
    if wins:
        return wins, None
    blocks = [m for m in places if needs(1 - mine, m, 3 - piece[m.piece]) == 1]
    if blocks:
        return blocks, None
    slack = [2] * (size * size)
    bests = []
    for per_colour in through:
        best = min(min(lengths) for lengths in per_colour)
        bests.append(best)
        for lengths in per_colour:
            for i, length in enumerate(lengths):
                if not cells[i]:
                    slack[i] = min(slack[i], length - best)

    def gain(move: Any) -> int:
        """Per chain through the cell at most one longer than its role's shortest (twice if
        one of the shortest): + where the piece helps the mover's or blocks the opponent's,
        - where it blocks the mover's or helps the opponent's."""
        own = piece[move.piece]
        total = 0
        for side, sign in ((mine, 1), (1 - mine, -1)):
            for colour in (1, 2):
                length = needs(side, move, colour)
                counted = (length <= bests[side]) + (length <= bests[side] + 1)
                total += counted * sign * (1 if colour == own else -1)
        return total

    centre = centre_distances(size)
    kept = [
        (-math.inf, 0, 0.0, index, m)
        if isinstance(m, str)
        else (-gain(m), centre[m.row * size + m.col], rng.random(), index, m)
        for index, m in enumerate(moves)
    ]
    chosen = [
        key for key in sorted(kept) if isinstance(key[-1], str) or slack[_cell(key[-1], size)] <= 1
    ]
    return [key[-1] for key in chosen], {key[-1]: (key[0], key[1]) for key in chosen}


def _cell(move: Place, size: int) -> int:
    return move.row * size + move.col


def _reference_evaluate(state: ChameleonState) -> Values:
    size, cells, vert_seat, mover = _reference_board(state)
    vert = min(_reference_distance(size, cells, colour, TOP_BOTTOM) for colour in (1, 2))
    horz = min(_reference_distance(size, cells, colour, LEFT_RIGHT) for colour in (1, 2))
    mine, theirs = (vert, horz) if mover == vert_seat else (horz, vert)
    value = 0.99 if mine <= 1 else sigmoid(theirs - mine + 0.5)
    return for_seat(mover, value)


# --- random games -----------------------------------------------------------------------------


def _random_game(seed: int) -> list[tuple[ChameleonState, Any]]:
    """Each position of a random game (the game going on) with the move made there, on a board
    of 3 to 11 cells a side, with a swap now and then."""
    assert GAME is not None
    rng = random.Random(seed)
    state = GAME.new_game({"size": rng.randint(3, 11)}, rng)
    played = []
    while GAME.outcome(state) is None:
        moves = GAME.legal_moves(state, state.ply % 2)
        swaps = SWAP in moves and rng.random() < 0.3
        move = SWAP if swaps else moves[rng.randrange(len(moves))]
        played.append((state, move))
        state = GAME.apply(state, move, rng)
    return played


def _mid_game(seed: int) -> ChameleonState:
    played = _random_game(seed)
    return played[random.Random(seed).randrange(len(played))][0]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_lean_position_plays_as_the_rules_do(seed: int) -> None:
    """At every position of a random game: the same moves, the same end after each of them
    (who won included), the same wins at once, and a pop gives the position back."""
    assert GAME is not None
    rng = random.Random(seed)
    played = _random_game(seed)
    position = LEAN.position(played[0][0])
    for state, next_move in played:
        seat = state.ply % 2
        assert LEAN.seat(position) == seat and LEAN.ended(position) is None
        assert position.snapshot() == LEAN.position(state).snapshot()
        legal = GAME.legal_moves(state, seat)
        assert LEAN.moves(position) == legal
        before = position.snapshot()
        winning = []
        for move in legal:
            LEAN.push(position, move)
            outcome = GAME.outcome(GAME.apply(state, move, rng))
            ended = LEAN.ended(position)
            if outcome is None:
                assert ended is None
            else:
                # The side to move now has won (+1) or lost (-1).
                mover_now = 1 - seat
                assert ended is not None
                assert outcome.winners == {mover_now if ended > 0 else seat}
                if seat in outcome.winners:
                    winning.append(move)
            LEAN.pop(position)
            assert position.snapshot() == before
        assert LEAN.captures(position) == winning
        LEAN.push(position, next_move)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), draw=st.integers(0, 2**32 - 1))
def test_the_fast_races_equal_the_cell_by_cell_search(seed: int, draw: int) -> None:
    """The policy's evaluation and candidates (with the generator left in the same state), and
    the lean position's win chance, equal the reference's in random positions."""
    assert GAME is not None
    state = _mid_game(seed)
    seat = state.ply % 2
    moves = GAME.legal_moves(state, seat)
    assert _chameleon_evaluate(GAME, state) == _reference_evaluate(state)
    fast_rng, slow_rng = random.Random(draw), random.Random(draw)
    assert _chameleon_candidates(GAME, state, seat, moves, fast_rng) == _reference_candidates(
        state, seat, moves, slow_rng
    )
    assert fast_rng.random() == slow_rng.random()
    position = ChameleonPosition(state)
    assert for_seat(seat, LEAN.win_chance(position)) == _reference_evaluate(state)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_tree_moves_are_the_candidates_with_their_own_ties(seed: int) -> None:
    """The lean tree's moves are the reference's candidates, in the same order of gain and
    distance from the centre (ties may fall otherwise: the lean position draws its own)."""
    assert GAME is not None
    state = _mid_game(seed)
    seat = state.ply % 2
    moves = GAME.legal_moves(state, seat)
    expected, keys = _reference_ranked(state, seat, moves, random.Random(seed))
    found = LEAN.tree_moves(LEAN.position(state))
    if keys is None:
        assert found == expected
    else:
        assert sorted(found, key=str) == sorted(expected, key=str)
        assert [keys[m] for m in found] == [keys[m] for m in expected]


def test_the_policy_searches_on_the_lean_position() -> None:
    assert GAME is not None
    policy = policy_for(GAME)
    assert policy.lean_tree and policy.tactics is TACTICS
    assert isinstance(TACTICS.lean, LeanPlay)


def test_the_tactics_take_a_win_and_read_nothing_else() -> None:
    # Vert's x chain c1-c4 lacks c5 alone: c5x is scored a win; c5o completes Horz's o chain
    # a5-e4, a loss; every other move alike.
    assert GAME is not None
    state = GAME.new_game({"size": 5}, random.Random(0))
    for ply, text in enumerate(["c1x", "a5o", "c2x", "b5o", "c3x", "d5o", "c4x", "e4o"]):
        state = GAME.apply(state, GAME.parse_move(state, ply % 2, text), random.Random(0))
    scored, nodes = root_scores(TACTICS, state, 4)
    scores = dict(scored)
    assert scores.pop(Place(2, 4, "x")) > DECIDED
    assert scores.pop(Place(2, 4, "o")) < -DECIDED
    assert set(scores.values()) == {0.0}
    assert nodes == len(scored)  # one pass: the win ends the deepening


def test_a_swap_is_pushed_and_popped() -> None:
    assert GAME is not None
    state = GAME.new_game({"size": 5}, random.Random(0))
    state = GAME.apply(state, GAME.parse_move(state, 0, "c3x"), random.Random(0))
    position = LEAN.position(state)
    before = position.snapshot()
    assert LEAN.moves(position)[0] == SWAP and LEAN.tree_moves(position)[0] == SWAP
    LEAN.push(position, SWAP)
    assert (
        position.snapshot() == LEAN.position(GAME.apply(state, SWAP, random.Random(0))).snapshot()
    )
    LEAN.pop(position)
    assert position.snapshot() == before


def test_the_tree_search_generator_orders_the_ties() -> None:
    """Ties in the tree's moves follow the search's generator: one seed, one order (a search
    is reproducible); another seed, another order (a robot does not replay the same game)."""
    assert GAME is not None
    state = GAME.new_game({}, random.Random(0))
    lean = LEAN

    def order(seed: int) -> list[object]:
        return list(lean.tree_moves(lean.position(state, random.Random(seed))))

    assert order(1) == order(1)
    assert len({tuple(map(str, order(seed))) for seed in range(4)}) > 1


def test_the_piece_that_builds_the_movers_chain_and_cuts_the_opponents_comes_first() -> None:
    # Vert's x chain c1-c2 and Horz's o chain a3-b3 each need three cells, c3 among them:
    # an x there builds Vert's chain and walls Horz's, so it leads the tree's moves (the tree
    # widens in their order); an o there does the opposite, so it comes last.
    assert GAME is not None
    state = GAME.new_game({"size": 5}, random.Random(0))
    for ply, text in enumerate(["c1x", "a3o", "c2x", "b3o"]):
        state = GAME.apply(state, GAME.parse_move(state, ply % 2, text), random.Random(0))
    for seed in range(3):  # whatever order the ties are drawn in
        moves = LEAN.tree_moves(LEAN.position(state, random.Random(seed)))
        assert moves[0] == Place(2, 2, "x") and moves[-1] == Place(2, 2, "o")
    assert policy_for(GAME).widen is not None
