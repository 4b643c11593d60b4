"""The conformance kit over every registered game, and proof that the kit catches broken games.

Set ``CI=true`` for more seeds per option set.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

import pytest

from pbmserv.games import all_games
from pbmserv.games.base import Game, MoveError, Termination, move_rng
from pbmserv.games.chameleon import Chameleon, Place
from pbmserv.games.testing import (
    ConformanceError,
    check_garbage,
    check_options,
    check_playout,
    check_spec,
    check_texts_read_back,
    option_sets,
    random_playout,
    replay,
)
from tests.games.secret_pick import (
    COLOURS,
    LeakyPick,
    LeakyPicture,
    NeverVaries,
    PickState,
    SecretPick,
)

SEEDS = range(16 if os.environ.get("CI", "").lower() == "true" else 4)

PLAYOUTS = [
    pytest.param(game, raw, seed, id=f"{game.SPEC.name}-{raw or 'defaults'}-seed{seed}")
    for game in all_games()
    for raw in option_sets(game)
    for seed in SEEDS
]


def test_games_are_registered() -> None:
    assert "chameleon" in [game.SPEC.name for game in all_games()]


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_spec_and_options(game: Game) -> None:
    check_spec(game)
    check_options(game)


@pytest.mark.parametrize(("game", "raw", "seed"), PLAYOUTS)
def test_random_playout(game: Game, raw: dict[str, str], seed: int) -> None:
    check_playout(game, game.validate_options(raw, game.SPEC.players), seed)


# --- the kit itself --------------------------------------------------------------------------


def test_move_rng_is_per_seed_and_ply() -> None:
    assert move_rng(7, 3).random() == random.Random("7:3").random()
    assert move_rng(7, 3).random() != move_rng(7, 4).random()


def test_playout_and_replay_agree() -> None:
    game = Chameleon()
    playout = random_playout(game, {"size": 5}, seed=3)
    assert playout.steps and game.outcome(playout.final) is not None
    states = replay(game, {"size": 5}, 3, playout.record)
    assert [game.dump(s) for s in states] == [game.dump(s) for s in playout.states]


class QuietErrors(Chameleon):
    """Its errors do not quote what the player wrote."""

    def parse_move(self, state, seat, text):  # type: ignore[no-untyped-def]
        try:
            return super().parse_move(state, seat, text)
        except MoveError as exc:
            raise type(exc)("that is not a move") from None


class LeakyTurns(Chameleon):
    """Lists moves for the seat that is not to move."""

    def legal_moves(self, state, seat):  # type: ignore[no-untyped-def]
        return super().legal_moves(replace(state, ply=seat), seat) if state.result is None else []


class ForgetfulLoad(Chameleon):
    """Loses the last move on load."""

    def load(self, data):  # type: ignore[no-untyped-def]
        return replace(super().load(data), last_move=None)


class MutatingApply(Chameleon):
    """Scribbles on the state it was given."""

    def apply(self, state, move, rng):  # type: ignore[no-untyped-def]
        after = super().apply(state, move, rng)
        object.__setattr__(state, "last_move", "scribbled")
        return after


class TwistedFormat(Chameleon):
    """Writes o for x and x for o, so its texts do not parse back to the same move."""

    def format_move(self, state, move):  # type: ignore[no-untyped-def]
        if isinstance(move, Place):
            move = move._replace(piece="o" if move.piece == "x" else "x")
        return super().format_move(state, move)


class RareMisread(Chameleon):
    """Reads a move on column e as another move, but only at ply 3 (as Extinction once read
    B2d5, a bishop named by its rank, as the coordinates b2-d5)."""

    def parse_move(self, state, seat, text):  # type: ignore[no-untyped-def]
        move = super().parse_move(state, seat, text)
        if state.ply == 3 and text.startswith("e"):
            others = [m for m in self.legal_moves(state, seat) if m != move]
            return others[0]
        return move


class ResigningRules(Chameleon):
    """Calls its own end a resignation, a kind only the server may give."""

    def outcome(self, state):  # type: ignore[no-untyped-def]
        result = super().outcome(state)
        return None if result is None else replace(result, termination=Termination.RESIGNATION)


def test_the_kit_reads_back_the_moves_of_every_position_not_only_the_sampled_ones() -> None:
    game = RareMisread()
    # Two sampled positions (the start and the end), one move each: ply 3 is checked only by
    # the every-position text check.
    with pytest.raises(ConformanceError, match=r"ply 3: 'e\w+' reads back as"):
        check_playout(game, {"size": 5}, seed=1, positions=2, moves_per_position=1)
    with pytest.raises(ConformanceError, match="reads back as"):
        check_texts_read_back(random_playout(game, {"size": 5}, seed=1))


@pytest.mark.parametrize(
    ("game", "match"),
    [
        (QuietErrors(), "does not quote it"),
        (LeakyTurns(), "is not to move but has legal moves"),
        (ForgetfulLoad(), r"dump\(load\(dump\(state\)\)\) differs"),
        (MutatingApply(), "changed the state"),
        (TwistedFormat(), "formatted differently"),
        (ResigningRules(), "a game's own end must be one of"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Game) else "",
)
def test_the_kit_catches_broken_games(game: Game, match: str) -> None:
    with pytest.raises(ConformanceError, match=match):
        check_playout(game, {"size": 5}, seed=1)


def test_the_kit_catches_a_game_without_secrets_that_determinizes_to_another_state() -> None:
    class Redrawn(Chameleon):
        def determinize(self, state, viewer, rng):  # type: ignore[no-untyped-def]
            return replace(state)

    with pytest.raises(ConformanceError, match="must determinize to the state itself"):
        check_playout(Redrawn(), {"size": 5}, seed=1)


def test_the_kit_catches_a_game_that_does_not_end() -> None:
    with pytest.raises(ConformanceError, match="no end after 5 moves"):
        random_playout(Chameleon(), {"size": 11}, seed=1, max_plies=5)


def test_garbage_check_passes_for_chameleon_start() -> None:
    game = Chameleon()
    check_garbage(game, game.new_game({"size": 11}, random.Random(0)))


def test_unregistered_game_fails_the_spec_check() -> None:
    class Renamed(Chameleon):
        SPEC = replace(Chameleon.SPEC, name="renamed")

    with pytest.raises(ConformanceError, match="find_game"):
        check_spec(Renamed())


class FairDraw(SecretPick):
    """Secret Pick whose computer player draws the Hider's colour from nothing the Seeker
    may not see."""

    def determinize(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        if viewer == 0 or state.pick is None or state.ply >= 2:
            return state
        return replace(state, pick=rng.choice(COLOURS))


class PeekingDraw(FairDraw):
    """Its draw is the true state: the Seeker's computer player would know the colour."""

    def determinize(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        return state


class ShiftedDraw(FairDraw):
    """Its draw is never the true colour: it depends on what the Seeker may not see."""

    def determinize(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        drawn = super().determinize(state, viewer, rng)
        if drawn is state or state.pick is None:
            return drawn
        return replace(drawn, pick=COLOURS[(COLOURS.index(state.pick) + 1) % len(COLOURS)])


class FixedDraw(FairDraw):
    """Its draw is always red: it leaks nothing, but the check would prove nothing either."""

    def determinize(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        drawn = super().determinize(state, viewer, rng)
        return drawn if drawn is state else replace(drawn, pick="red")


class SeenDraw(FairDraw):
    """Its draw shows the Seeker a guess already made."""

    def determinize(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        drawn = super().determinize(state, viewer, rng)
        return drawn if drawn is state else replace(drawn, guess="red")


def test_the_no_leak_check_passes_a_game_that_hides_well() -> None:
    for seed in range(3):
        check_playout(FairDraw(), {}, seed)


@pytest.mark.parametrize(
    ("game", "match"),
    [
        (LeakyPick(), r"sees \(render\) changes with secrets"),
        (LeakyPicture(), r"sees \(picture\) changes with secrets"),
        (NeverVaries(), "vary_hidden never changed a state"),
        (SecretPick(), "a game with hidden information must determinize"),
        (PeekingDraw(), "determinize for seat 1 depends on secrets it may not see"),
        (ShiftedDraw(), "determinize for seat 1 depends on secrets it may not see"),
        (FixedDraw(), "determinize never drew two different states"),
        (SeenDraw(), r"what viewer 1 sees \(render\) changes in the state determinize drew"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Game) else "",
)
def test_the_no_leak_check_catches_leaks(game: Game, match: str) -> None:
    with pytest.raises(ConformanceError, match=match):
        check_playout(game, {}, seed=1)


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_the_swap_is_a_move_of_games_that_have_one(game: Game) -> None:
    playout = random_playout(game, game.validate_options({}, game.SPEC.players), 0)
    second = playout.steps[1].before  # the position of the second move
    seat = next(iter(game.to_move(second).seats))
    if not game.SPEC.has_swap:
        with pytest.raises(MoveError):
            game.swap_move(second, seat)
        return
    swap = game.swap_move(second, seat)
    assert swap in game.legal_moves(second, seat)
    with pytest.raises(MoveError):  # never on the first move
        game.swap_move(playout.start, next(iter(game.to_move(playout.start).seats)))


def test_the_kit_catches_an_int_option_given_as_text() -> None:
    size = replace(Chameleon.SPEC.options[0], default="11")

    class TextSize(Chameleon):
        SPEC = replace(Chameleon.SPEC, options=(size,))

    with pytest.raises(ConformanceError, match="default and choices must be"):
        check_spec(TextSize())
