"""The search on toy games whose answers are known: opponents play their own best moves, chance
is drawn anew each iteration, secrets are never read, a budget of iterations gives one answer
for one seed."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.robots.mcts import Budget, Search, search
from pbmserv.robots.policy import DEFAULT
from tests.robots.toys import COLOURS, Gamble, Guess, GuessState, Nim

BUDGET = Budget(iterations=600, cpu_seconds=10.0)


@pytest.mark.parametrize("pile", [5, 6, 7, 9, 10, 11])
def test_nim_leaves_a_multiple_of_four(pile: int) -> None:
    # Only leaving a multiple of 4 wins: the search must expect the best replies.
    game = Nim()
    state = game.new_game({"pile": pile}, random.Random(0))
    found = search(game, state, 0, DEFAULT, BUDGET, random.Random(1))
    assert (pile - found.move) % 4 == 0
    assert found.value > 0.6


def test_nim_lost_position_is_valued_low() -> None:
    game = Nim()
    state = game.new_game({"pile": 8}, random.Random(0))
    found = search(game, state, 0, DEFAULT, BUDGET, random.Random(1))
    assert found.value < 0.4


def test_a_move_that_wins_at_once_is_taken_without_search() -> None:
    game = Nim()
    state = game.new_game({"pile": 3}, random.Random(0))
    found = search(game, state, 0, DEFAULT, BUDGET, random.Random(1))
    assert found.move == 3 and found.value == 1.0 and found.iterations == 0


def test_chance_is_drawn_anew_each_iteration() -> None:
    # A tree that froze the first draw of "risky" could think it always wins.
    game = Gamble()
    state = game.new_game({}, random.Random(0))
    for seed in range(5):
        found = search(game, state, 0, DEFAULT, BUDGET, random.Random(seed))
        assert found.move == "safe"
        assert 0.55 < found.value < 0.85


def test_value_of_the_seat_not_to_move() -> None:
    game = Gamble()
    state = game.new_game({}, random.Random(0))
    found = search(game, state, 1, DEFAULT, BUDGET, random.Random(3))
    assert found.move is None
    assert 0.1 < found.root_value < 0.6  # the bank wins when the player's gamble fails


@settings(max_examples=20, deadline=None)
@given(pick=st.sampled_from(COLOURS), other=st.sampled_from(COLOURS), seed=st.integers(0, 99))
def test_the_seeker_never_reads_the_hidden_pick(pick: str, other: str, seed: int) -> None:
    # Reading the pick would make the guess follow it; a determinising search guesses the same
    # whatever was picked, for the same generator.
    game = Guess()
    budget = Budget(iterations=60, cpu_seconds=10.0)
    first = search(game, GuessState(pick=pick), 1, DEFAULT, budget, random.Random(seed))
    second = search(game, GuessState(pick=other), 1, DEFAULT, budget, random.Random(seed))
    assert first.move == second.move
    assert first.value == second.value


def test_a_guess_is_not_taken_for_a_certain_win() -> None:
    # A guess wins in some determinisations only: it must not pass for a move that wins at once.
    game = Guess()
    found = search(game, GuessState(pick="red"), 1, DEFAULT, BUDGET, random.Random(0))
    assert found.iterations == BUDGET.iterations
    assert 0.2 < found.value < 0.6


def test_same_seed_and_budget_same_search() -> None:
    game = Nim()
    state = game.new_game({"pile": 21}, random.Random(0))
    runs = [search(game, state, 0, DEFAULT, BUDGET, random.Random(7)) for _ in range(2)]
    assert runs[0].move == runs[1].move
    assert runs[0].value == runs[1].value
    assert runs[0].iterations == runs[1].iterations == BUDGET.iterations


def test_the_cpu_cap_stops_a_long_search() -> None:
    game = Nim()
    state = game.new_game({"pile": 21}, random.Random(0))
    found = search(game, state, 0, DEFAULT, Budget(10**9, 0.05), random.Random(7))
    assert 1 <= found.iterations < 10**9
    assert found.cpu_seconds < 1.0


def test_a_temperature_sometimes_plays_a_lesser_move_and_none_plays_the_best() -> None:
    # From a pile of 6 only taking 2 wins: at no temperature the search always takes it; at
    # temperature 1 it draws among the moves in proportion to their visits, so the lesser
    # moves come up now and then, but the best stays the most played.
    game = Nim()
    state = game.new_game({"pile": 6}, random.Random(0))
    cold = [search(game, state, 0, DEFAULT, BUDGET, random.Random(s)).move for s in range(20)]
    assert cold == [2] * 20
    warm_budget = Budget(iterations=100, cpu_seconds=10.0, temperature=1.0)
    warm = [search(game, state, 0, DEFAULT, warm_budget, random.Random(s)).move for s in range(60)]
    assert set(warm) == {1, 2, 3}
    assert warm.count(2) > max(warm.count(1), warm.count(3))
    again = [search(game, state, 0, DEFAULT, warm_budget, random.Random(s)).move for s in range(60)]
    assert again == warm  # the search's own generator decides: one seed, one move


def test_a_widening_node_takes_in_the_child_its_policy_picks() -> None:
    """Policy.expand names which of the moves not yet in the tree a node takes in next, seeing
    the node's position and its mover (Entropy's policy takes the best of a few at once)."""
    game = Nim()
    state = game.new_game({"pile": 10}, random.Random(0))
    seen: list[tuple[int, int, list[int]]] = []

    def largest(game, state, actor, fresh, rng):  # type: ignore[no-untyped-def]
        seen.append((state.pile, actor, list(fresh)))
        return fresh.index(max(fresh))

    policy = replace(DEFAULT, widen=0.5, expand=largest)
    one = Search(game, state, 0, policy, random.Random(1))
    one.run(Budget(iterations=1, cpu_seconds=10.0))
    assert list(one.root.children) == [3]
    assert seen[0] == (10, 0, [1, 2, 3])
    many = Search(game, state, 0, policy, random.Random(1))
    many.run(Budget(iterations=60, cpu_seconds=10.0))
    # The children came in largest first: 3, then 2, then 1, as the widening allowed.
    assert list(many.root.children) == [3, 2, 1]
    # Below the root: the child's own position, with the other seat to move.
    assert (7, 1, [1, 2, 3]) in seen
