"""Toy games whose best moves are known, to test the search apart from any real game.

- :class:`Nim`: take 1-3 from a pile, who takes the last wins; the winning move leaves a
  multiple of 4, so the robot must expect the opponent to play its own best move.
- :class:`Gamble`: one choice, "safe" wins 70% of the time, "risky" 30%, drawn by ``apply``
  from the generator it is given: a search that froze one draw into its tree would be fooled.
- :class:`Guess`: the Hider picks a colour in secret, the Seeker guesses it. A Seeker that
  read the pick would always guess right; one that searches only determinisations cannot.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    Outcome,
    Termination,
    Turn,
    Viewer,
)


class _Toy(Game[Any, Any]):
    """What every toy needs but never uses."""

    def render(self, state: Any, viewer: Viewer, players: Sequence[str] = ()) -> str:
        return repr(state)

    def svg(self, state: Any, viewer: Viewer) -> str:
        return "<svg></svg>"

    def dump(self, state: Any) -> dict[str, Any]:
        return {"version": 1, "state": repr(state)}

    def load(self, data: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def format_move(self, state: Any, move: Any) -> str:
        return str(move)

    def parse_move(self, state: Any, seat: int, text: str) -> Any:
        for move in self.legal_moves(state, seat):
            if self.format_move(state, move) == text:
                return move
        raise IllegalMoveError(f'"{text}" is not legal')


@dataclass(frozen=True)
class NimState:
    pile: int
    ply: int = 0
    winner: int | None = None


class Nim(_Toy):
    SPEC = GameSpec(name="nim", title="Nim", seat_names=("first", "second"))

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> NimState:
        return NimState(int(options.get("pile", 10)))

    def to_move(self, state: NimState) -> Turn:
        return Turn(frozenset() if state.winner is not None else frozenset({state.ply % 2}))

    def legal_moves(self, state: NimState, seat: int) -> list[Any]:
        if seat not in self.to_move(state).seats:
            return []
        return list(range(1, min(3, state.pile) + 1))

    def apply(self, state: NimState, move: Any, rng: random.Random) -> NimState:
        pile = state.pile - move
        winner = state.ply % 2 if pile == 0 else None
        return NimState(pile, state.ply + 1, winner)

    def outcome(self, state: NimState) -> Outcome | None:
        if state.winner is None:
            return None
        return Outcome(frozenset({state.winner}), "took the last", termination=Termination.GOAL)


@dataclass(frozen=True)
class GambleState:
    result: int | None = None  # the winning seat once decided


class Gamble(_Toy):
    SPEC = GameSpec(name="gamble", title="Gamble", seat_names=("player", "bank"), uses_chance=True)
    ODDS = {"safe": 0.7, "risky": 0.3}

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> GambleState:
        return GambleState()

    def to_move(self, state: GambleState) -> Turn:
        return Turn(frozenset() if state.result is not None else frozenset({0}))

    def legal_moves(self, state: GambleState, seat: int) -> list[Any]:
        return ["risky", "safe"] if seat in self.to_move(state).seats else []

    def apply(self, state: GambleState, move: Any, rng: random.Random) -> GambleState:
        return GambleState(0 if rng.random() < self.ODDS[move] else 1)

    def outcome(self, state: GambleState) -> Outcome | None:
        if state.result is None:
            return None
        return Outcome(frozenset({state.result}), "the dice", termination=Termination.GOAL)


COLOURS = ("red", "green", "blue")


@dataclass(frozen=True)
class GuessState:
    pick: str | None = None
    guess: str | None = None


class Guess(_Toy):
    SPEC = GameSpec(
        name="guess", title="Guess", seat_names=("hider", "seeker"), hidden_information=True
    )

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> GuessState:
        return GuessState()

    def to_move(self, state: GuessState) -> Turn:
        if state.pick is None:
            return Turn(frozenset({0}))
        return Turn(frozenset() if state.guess is not None else frozenset({1}))

    def legal_moves(self, state: GuessState, seat: int) -> list[Any]:
        return list(COLOURS) if seat in self.to_move(state).seats else []

    def apply(self, state: GuessState, move: Any, rng: random.Random) -> GuessState:
        if state.pick is None:
            return replace(state, pick=move)
        return replace(state, guess=move)

    def outcome(self, state: GuessState) -> Outcome | None:
        if state.guess is None:
            return None
        winner = 1 if state.guess == state.pick else 0
        return Outcome(frozenset({winner}), "guessed", termination=Termination.GOAL)

    def vary_hidden(self, state: GuessState, viewer: int, rng: random.Random) -> GuessState:
        if viewer == 0 or state.pick is None or state.guess is not None:
            return state
        return replace(state, pick=rng.choice(COLOURS))

    def determinize(self, state: GuessState, viewer: int, rng: random.Random) -> GuessState:
        if viewer == 0 or state.pick is None or state.guess is not None:
            return state
        return replace(state, pick=rng.choice(COLOURS))
