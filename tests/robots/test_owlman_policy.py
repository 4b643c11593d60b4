"""The Owlman robots see the tactics of the game's ends: a win at once and a threat on Doc."""

from __future__ import annotations

import random

import pytest

from pbmserv.games import find_game
from pbmserv.games.owlman import DOC, EMPTY, HELPER, OWL, OwlmanState, index
from pbmserv.robots.levels import LEVELS, robot_move
from pbmserv.robots.policies.owlman import POLICY
from pbmserv.robots.view import seat_view


def _board(pieces: dict[str, str]) -> str:
    cells = [EMPTY] * 64
    for square, piece in pieces.items():
        cells[index(square)] = piece
    return "".join(cells)


def _after(state: OwlmanState, seat: int, text: str) -> OwlmanState:
    game = find_game("owlman")
    assert game is not None
    return game.apply(state, game.parse_move(state, seat, text), random.Random(0))


def _answer_wins(pieces: dict[str, str], ply: int, seat: int, level: int) -> str:
    """The robot's move for ``seat``, checked to win the game at once."""
    game = find_game("owlman")
    assert game is not None
    state = OwlmanState(cells=_board(pieces), ply=ply)
    text = robot_move(game, seat_view(game, state, seat), level, random.Random(level)).text
    result = game.outcome(_after(state, seat, text))
    assert result is not None and result.winners == {seat}, text
    return text


@pytest.mark.parametrize("level", LEVELS)
def test_white_brings_a_helper_to_b7_beside_doc_on_a8(level: int) -> None:
    pieces = {"a8": DOC, "c6": HELPER, "e4": HELPER, "f7": OWL}
    assert _answer_wins(pieces, 20, 0, level) == "c6-b7"


@pytest.mark.parametrize("level", LEVELS)
def test_owlman_takes_doc_still_on_h1(level: int) -> None:
    _answer_wins({"h1": DOC, "d3": HELPER, "e4": HELPER, "g2": OWL}, 21, 1, level)


# Levels 1 and 2 only: the search of level 3 takes seconds here (nothing wins at once).
@pytest.mark.parametrize("level", [1, 2])
def test_doc_leaves_h1_when_owlman_can_swoop_onto_it(level: int) -> None:
    # Owlman on e2 swoops (3 + 1) onto h1 next: only Doc stepping off to g2 saves White.
    game = find_game("owlman")
    assert game is not None
    cells = _board({"h1": DOC, "d3": HELPER, "f5": HELPER, "c6": HELPER, "e2": OWL})
    state = OwlmanState(cells=cells, ply=10)
    choice = robot_move(game, seat_view(game, state, 0), level, random.Random(level))
    assert choice.text == "h1-g2"


def test_the_evaluation_prefers_doc_nearer_a8() -> None:
    game = find_game("owlman")
    assert game is not None
    assert POLICY.evaluate is not None
    far = OwlmanState(cells=_board({"g2": DOC, "d3": HELPER, "a8": OWL}), ply=11)
    near = OwlmanState(cells=_board({"c6": DOC, "d3": HELPER, "a8": OWL}), ply=11)
    assert POLICY.evaluate(game, near)[0] > POLICY.evaluate(game, far)[0]
