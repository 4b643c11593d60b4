"""Loading a stored state (issue 16): its cost does not grow with the moves played, shown by
what load does rather than by timing it, and a loaded state plays on exactly like the state
that was stored, for every game."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import all_games, chameleon
from pbmserv.games.base import Game, move_rng
from pbmserv.games.chameleon import game as chameleon_game
from pbmserv.games.chameleon import links as chameleon_links
from pbmserv.games.hmdg import GAME as HMDG
from pbmserv.games.hmdg import storage as hmdg_storage
from pbmserv.games.testing import option_sets, random_playout, viewers

RNG = random.Random(0)


def stored(game: Game, state: Any) -> Any:
    """``dump`` as the database's JSON column gives it back."""
    return json.loads(json.dumps(game.dump(state)))


def positions(game: Game, seeds: range) -> list[Any]:
    """Every position of some default random games, but the last of each (the game over)."""
    options = game.validate_options({}, game.SPEC.players)
    return [s.before for seed in seeds for s in random_playout(game, options, seed).steps]


# --- Chameleon: the union-find is built by the first apply, not by load ----------------------


def test_chameleon_load_links_no_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """load links no piece into the union-find, however full the board; the first apply
    builds it once, every piece linked, and a second apply on the same state reuses it."""
    linked: list[int] = []
    link = chameleon_links._link

    def counted(*args: Any) -> int:
        linked.append(args[-1])
        return link(*args)

    # Building a union-find links in links.py, a move in game.py: both are counted.
    monkeypatch.setattr(chameleon_links, "_link", counted)
    monkeypatch.setattr(chameleon_game, "_link", counted)
    states = positions(chameleon.GAME, range(3))
    assert max(s.ply for s in states) > 80
    for state in states:
        data = stored(chameleon.GAME, state)
        linked.clear()
        loaded = chameleon.GAME.load(data)
        seat = state.ply % 2
        chameleon.GAME.legal_moves(loaded, seat)
        chameleon.GAME.render(loaded, seat)
        chameleon.GAME.svg(loaded, seat)
        assert linked == [] and loaded._links is None
    late = max(states, key=lambda s: s.ply)
    loaded = chameleon.GAME.load(stored(chameleon.GAME, late))
    first, second = chameleon.GAME.legal_moves(loaded, late.ply % 2)[:2]
    chameleon.GAME.apply(loaded, first, RNG)
    pieces = sum(1 for code in late.cells if code)
    assert len(linked) == pieces + 1  # the board's pieces, then the one placed
    chameleon.GAME.apply(loaded, second, RNG)
    assert len(linked) == pieces + 2


# --- HMDG: the turns are read when first needed, not by load ---------------------------------


def test_hmdg_load_reads_the_last_two_turns_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """load reads at most the last two stored turns at any length of game, and leaves the
    others to be read when the turns are first looked at, once."""
    read: list[object] = []
    read_turn = hmdg_storage._stored_turn
    monkeypatch.setattr(
        hmdg_storage, "_stored_turn", lambda turn: read.append(turn) or read_turn(turn)
    )
    states = positions(HMDG, range(3))
    assert max(len(s.turns) for s in states) > 60
    for state in states:
        data = stored(HMDG, state)
        read.clear()
        loaded = HMDG.load(data)
        for seat in HMDG.to_move(loaded).seats:
            HMDG.legal_moves(loaded, seat)
            HMDG.svg(loaded, seat)
        HMDG.move_number(loaded)
        assert len(read) <= 2, f"{len(read)} turns read of {len(data['turns'])}"
        read.clear()
        assert loaded.turns == state.turns
        assert list(loaded.turns) == list(state.turns)
        assert len(read) == len(data["turns"])  # every turn, read once and kept


# --- every game: a loaded state is the state that was stored ---------------------------------


def _same_behaviour(
    game: Game, played: Any, loaded: Any, seed: int, ply: int, *, every_move: bool
) -> None:
    """Everything the contract shows of the two states is the same, and so is every state a
    legal move leads to (``every_move``; else a dozen of them)."""
    assert game.dump(loaded) == game.dump(played)
    assert game.to_move(loaded) == game.to_move(played)
    assert game.outcome(loaded) == game.outcome(played)
    assert game.move_number(loaded) == game.move_number(played)
    assert game.last_move_text(loaded) == game.last_move_text(played)
    for viewer in viewers(game):
        assert game.render(loaded, viewer) == game.render(played, viewer)
        assert game.svg(loaded, viewer) == game.svg(played, viewer)
    for seat in range(game.SPEC.players):
        moves = game.legal_moves(played, seat)
        assert game.legal_moves(loaded, seat) == moves
        for move in moves if every_move else moves[:: max(1, len(moves) // 12)]:
            expected = game.apply(played, move, move_rng(seed, ply))
            got = game.apply(loaded, move, move_rng(seed, ply))
            assert game.dump(got) == game.dump(expected)
            assert game.outcome(got) == game.outcome(expected)


@pytest.mark.parametrize("game", all_games(), ids=lambda game: game.SPEC.name)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_a_loaded_state_plays_on_like_the_stored_one(game: Game, data: st.DataObject) -> None:
    """At a random position of a random game, the loaded state shows, allows and leads to the
    same as the state stored, and so does every position of the game played on from both."""
    raw = data.draw(st.sampled_from(option_sets(game)), label="options")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    options = game.validate_options(raw, game.SPEC.players)
    playout = random_playout(game, options, seed)
    index = data.draw(st.integers(0, len(playout.steps)), label="ply")
    played = playout.states[index]
    loaded = game.load(stored(game, played))
    chooser = random.Random(f"on:{seed}")
    for ply in range(index, index + 30):
        _same_behaviour(game, played, loaded, seed, ply, every_move=ply == index)
        seats = sorted(game.to_move(played).seats)
        if not seats:
            break
        seat = chooser.choice(seats)
        move = chooser.choice(game.legal_moves(played, seat))
        played = game.apply(played, move, move_rng(seed, ply))
        loaded = game.apply(loaded, move, move_rng(seed, ply))
