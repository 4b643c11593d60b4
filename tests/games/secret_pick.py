"""Secret Pick: a two-move toy game with hidden information, a game verb and a record format.

It exists to test the contract's hidden-information parts (public move text, per-viewer
render, ``vary_hidden``, verbs, ``export``) in the kit and in the server, independently of any
real game. The Hider picks a colour in secret; the Seeker guesses it with ``guess COLOUR``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pbmserv.games.base import (
    OMNISCIENT,
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    MoveKind,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)

COLOURS = ("red", "green", "blue")


@dataclass(frozen=True)
class PickState:
    ply: int = 0
    pick: str | None = None
    guess: str | None = None
    last_move: str | None = None


class SecretPick(Game):
    SPEC = GameSpec(
        name="secretpick",
        title="Secret Pick",
        seat_names=("Hider", "Seeker"),
        hidden_information=True,
        move_kinds=(MoveKind("guess", "COLOUR", "guess the colour the Hider picked"),),
        record_formats=("txt",),
    )

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> PickState:
        return PickState()

    def to_move(self, state: PickState) -> Turn:
        if state.ply == 0:
            return Turn(frozenset({0}), "move", {0: "pick a colour: red, green or blue"})
        if state.ply == 1:
            return Turn(frozenset({1}), "guess", {1: "guess the Hider's colour"})
        return Turn(frozenset())

    def parse_move(self, state: PickState, seat: int, text: str) -> tuple[str, str]:
        words = text.lower().split()
        if len(words) != 2 or words[0] not in ("pick", "guess") or words[1] not in COLOURS:
            raise InvalidMoveError(f'"{text}" is not "pick COLOUR" or "guess COLOUR"')
        expected = "pick" if seat == 0 else "guess"
        if seat not in self.to_move(state).seats or words[0] != expected:
            raise IllegalMoveError(f'"{text}": it is not your turn to {words[0]}')
        return words[0], words[1]

    def format_move(self, state: PickState, move: tuple[str, str]) -> str:
        return " ".join(move)

    def public_move_text(self, state: PickState, move: tuple[str, str]) -> str:
        return "hides a colour" if move[0] == "pick" else self.format_move(state, move)

    def legal_moves(self, state: PickState, seat: int) -> list[tuple[str, str]]:
        if seat not in self.to_move(state).seats:
            return []
        return [("pick" if seat == 0 else "guess", colour) for colour in COLOURS]

    def apply(self, state: PickState, move: tuple[str, str], rng: random.Random) -> PickState:
        public = self.public_move_text(state, move)
        if move[0] == "pick":
            return replace(state, ply=1, pick=move[1], last_move=public)
        return replace(state, ply=2, guess=move[1], last_move=public)

    def outcome(self, state: PickState) -> Outcome | None:
        if state.ply < 2:
            return None
        found = state.guess == state.pick
        return Outcome(
            frozenset({1 if found else 0}),
            "found" if found else "not found",
            termination=Termination.GOAL,
        )

    def render(self, state: PickState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        sees = viewer in (0, OMNISCIENT) or state.ply >= 2
        hidden = state.pick if sees and state.pick else "?"
        return f"Hidden colour: {hidden}\nGuess: {state.guess or '-'}\n"

    def svg(self, state: PickState, viewer: Viewer) -> str:
        sees = viewer in (0, OMNISCIENT) or state.ply >= 2
        colour = state.pick if sees and state.pick else "grey"
        return f'<svg xmlns="http://www.w3.org/2000/svg"><circle r="9" fill="{colour}"/></svg>'

    def vary_hidden(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        if viewer == 0 or state.pick is None or state.ply >= 2:
            return state
        return replace(state, pick=rng.choice([c for c in COLOURS if c != state.pick]))

    def dump(self, state: PickState) -> dict[str, Any]:
        return {"version": 1, **state.__dict__}

    def load(self, data: Mapping[str, Any]) -> PickState:
        self._check_version(data)
        try:
            return PickState(**{k: v for k, v in data.items() if k != "version"})
        except TypeError as exc:
            raise StateError(str(exc)) from None

    def export(
        self,
        fmt: str,
        start: PickState,
        moves: Sequence[str],
        outcome: Outcome | None,
        headers: Mapping[str, str],
    ) -> str:
        if fmt != "txt":
            return super().export(fmt, start, moves, outcome, headers)
        lines = [f"Hider: {headers['Seat0']}", f"Seeker: {headers['Seat1']}", *moves]
        if outcome is not None:
            lines.append(f"Result: {outcome.reason}")
        return "\n".join(lines) + "\n"


class LeakyPick(SecretPick):
    """Shows the Hider's colour to everyone: the no-leak check must catch it."""

    def render(self, state: PickState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        return super().render(state, OMNISCIENT)


class LeakyPicture(SecretPick):
    """Its text diagram keeps the secret, but its picture draws the hidden colour for all."""

    def svg(self, state: PickState, viewer: Viewer) -> str:
        return super().svg(state, OMNISCIENT)


class NeverVaries(SecretPick):
    """Its vary_hidden changes nothing, so a no-leak check over it would prove nothing."""

    def vary_hidden(self, state: PickState, viewer: int, rng: random.Random) -> PickState:
        return state


GAME = SecretPick()
