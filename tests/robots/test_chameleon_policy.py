"""The Chameleon robots: the swap answered as the game's solution says."""

from __future__ import annotations

import random

import pytest

from pbmserv.games import find_game
from pbmserv.games.chameleon import SWAP, ChameleonState
from pbmserv.robots.levels import robot_move
from pbmserv.robots.view import seat_view


def _played(size: int, texts: list[str]) -> ChameleonState:
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": size}, random.Random(0))
    for ply, text in enumerate(texts):
        state = game.apply(state, game.parse_move(state, ply % 2, text), random.Random(0))
    return state


# Solved by exhaustive search: on 3x3 the player to move after any first piece wins, so a swap
# (which hands the move back to the first player) throws the game away. A piece is anyone's in
# Chameleon; unlike Hex, a first move gives its player nothing of their own.
@pytest.mark.parametrize("first", ["b2x", "a1o", "c1x", "b3o"])
@pytest.mark.parametrize("level", [1, 2])
def test_no_swap_after_a_first_piece_on_3x3(first: str, level: int) -> None:
    game = find_game("chameleon")
    assert game is not None
    state = _played(3, [first])
    assert robot_move(game, seat_view(game, state, 1), level, random.Random(level)).text != SWAP


def test_the_second_player_converts_the_3x3_win() -> None:
    game = find_game("chameleon")
    assert game is not None
    rng = random.Random(5)
    state = _played(3, ["b2x"])
    while game.outcome(state) is None:
        seat = state.ply % 2
        if seat == 1:
            text = robot_move(game, seat_view(game, state, 1), 2, rng).text
        else:
            moves = game.legal_moves(state, 0)
            text = game.format_move(state, moves[rng.randrange(len(moves))])
        state = game.apply(state, game.parse_move(state, seat, text), rng)
    result = game.outcome(state)
    assert result is not None and result.winners == {1}
