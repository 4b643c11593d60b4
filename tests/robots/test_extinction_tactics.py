"""The tactics before the tree search (pbmserv.robots.tactics) in Extinction: the lean position
agrees with the rule module over many random games, and what it reads keeps the robots from
the blunders an outside engine punished (a last queen or king left hanging, a fork of two last
pieces), within a small share of a level's time."""

from __future__ import annotations

import random

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.extinction import position
from pbmserv.robots import robot_move, seat_view
from pbmserv.robots.lean_search import LeanSearch
from pbmserv.robots.mcts import Budget
from pbmserv.robots.policies import policy_for
from pbmserv.robots.policies.extinction_tactics import TACTICS, ExtinctionLean
from pbmserv.robots.tactics import DECIDED, LeanPlay, root_scores, safe_moves

GAME = find_game("extinction")
LEAN = ExtinctionLean()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_lean_position_plays_as_the_rules_do(seed: int) -> None:
    """At every position of a random game: the same moves, the same end after each of them
    (who won included), and a pop gives the position back."""
    assert GAME is not None
    rng = random.Random(seed)
    state = GAME.new_game({}, rng)
    for _ in range(160):
        seat = state.seat_to_move
        legal = GAME.legal_moves(state, seat)
        if not legal:
            break
        board = LEAN.position(state)
        assert set(LEAN.moves(board)) == set(legal)
        theirs = board.occupied_co[not board.turn]
        assert set(LEAN.captures(board)) == {m for m in legal if theirs >> m.to_square & 1}
        before = board.fen()
        for move in legal:
            LEAN.push(board, move)
            ended = LEAN.ended(board)
            after = GAME.apply(state, move, rng)
            outcome = GAME.outcome(after)
            if ended is None:
                # The real game may still end by a rule the tactics leave to it (stalemate,
                # repetition, the 75-move rule): drawn, never won.
                assert outcome is None or outcome.winners == frozenset()
            else:
                mover_won = ended < 0  # the side to move now has lost
                assert outcome is not None
                assert outcome.winners == frozenset({seat if mover_won else 1 - seat})
            LEAN.pop(board)
            assert board.fen() == before
        state = GAME.apply(state, legal[rng.randrange(len(legal))], rng)


def test_a_last_piece_left_hanging_is_scored_as_lost() -> None:
    # White's only queen is attacked by a pawn; moving it away is the only safe kind of move.
    state = position("rnbqkbnr/ppp1pppp/8/3p4/4Q3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 3")
    scored, _ = root_scores(TACTICS, state, 1)
    scores = dict(scored)
    assert all(scores[m] < -DECIDED for m in scores if m.from_square != chess.E4)
    kept = safe_moves(scored, TACTICS.margin)
    assert kept and all(m.from_square == chess.E4 for m in kept)


def test_a_fork_of_two_last_pieces_is_seen_as_a_win() -> None:
    # Black to move forks White's only king (e1) and only queen (f2) with Nd3, which nothing
    # can take: read two plies deep (then the captures), a forced win; one ply sees only the
    # double threat, a good move but no certain win.
    state = position("r1bqkbnr/pppppppp/8/8/1n6/5PP1/PP1P1QBP/RNB1K1NR b KQkq - 0 1")
    scored, _ = root_scores(TACTICS, state, 2)
    best_move, best = max(scored, key=lambda item: item[1])
    assert best_move == chess.Move.from_uci("b4d3") and best > DECIDED
    shallow, _ = root_scores(TACTICS, state, 1)
    best_move, best = max(shallow, key=lambda item: item[1])
    assert best_move == chess.Move.from_uci("b4d3") and 5 < best < DECIDED


def test_a_robot_takes_a_last_piece_and_saves_its_own() -> None:
    assert GAME is not None
    # White's queen may take Black's only queen on d8 outright: every level takes it.
    takes = position("rnbqkbnr/ppp2ppp/8/3Q4/8/8/PPP1PPPP/RNB1KBNR w KQkq - 0 4")
    for level in (1, 2, 3):
        choice = robot_move(
            GAME, seat_view(GAME, takes, 0), level, random.Random(level), cpu_seconds=2.0
        )
        assert choice.text == "Qxd8#"
    # White's only queen attacked by a pawn: no level leaves it there.
    hangs = position("rnbqkbnr/ppp1pppp/8/3p4/4Q3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 3")
    for seed in range(4):
        choice = robot_move(GAME, seat_view(GAME, hangs, 0), 1, random.Random(seed))
        move = GAME.parse_move(hangs, 0, choice.text)
        assert move.from_square == chess.E4, choice.text


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_tactics_cost_a_small_share_of_a_search(depth: int) -> None:
    """Counted in positions, not seconds: the node budget bounds every read."""
    assert GAME is not None
    rng = random.Random(5)
    state = GAME.new_game({}, rng)
    for _ in range(20):
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state, state.seat_to_move)), rng)
    _, nodes = root_scores(TACTICS, state, depth)
    assert 0 < nodes <= 5 * TACTICS.node_budget


def _lean_search(state: object, seed: int = 0, seat: int = 0) -> LeanSearch:
    assert GAME is not None
    policy = policy_for(GAME)
    lean = policy.tactics.lean if policy.tactics else None
    assert isinstance(lean, LeanPlay)
    return LeanSearch(GAME, state, seat, policy, random.Random(seed), lean)


def test_the_lean_tree_sees_a_hanging_queen_without_the_tactics() -> None:
    """The tree alone (no tactics read first), on the lean position: it moves the queen that a
    pawn attacks, and leaves its position as it found it."""
    assert GAME is not None
    hangs = position("rnbqkbnr/ppp1pppp/8/3p4/4Q3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 3")
    for seed in range(3):
        search = _lean_search(hangs, seed)
        found = search.run(Budget(iterations=1500, cpu_seconds=60.0))
        assert found.move.from_square == chess.E4, GAME.format_move(hangs, found.move)
        assert found.iterations == 1500
        assert search.position.fen() == hangs.fen and not search.position.move_stack


@pytest.mark.parametrize(("fen", "seat"), [("w", 0), ("b", 1)])
def test_the_lean_tree_values_a_rook_up_for_the_right_seat(fen: str, seat: int) -> None:
    """White a rook up (Black's last rook weak too): good for White whoever is to move, bad
    for Black; values stay in 0..1."""
    state = position(f"1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR {fen} Kk - 0 1")
    found = _lean_search(state, 1, seat).run(Budget(iterations=300, cpu_seconds=60.0))
    assert 0.0 <= found.root_value <= 1.0
    assert found.root_value > 0.7 if seat == 0 else found.root_value < 0.3
