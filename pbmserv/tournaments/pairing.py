"""The values every pairing system returns: who meets whom, who moves first, who has a bye.

A player is identified by whatever the caller uses (a user id string or a row number); the
pairing code only needs the ids to be hashable and to compare equal. Everything here is an
immutable value, so a round once paired can be stored, compared and replayed.

First moves are balanced the same way by every format (:func:`first_mover`): the player who has
moved first less often (counted as first moves minus second moves) moves first; on a tie, the one
who moved second the last time the two records differ; on a further tie, the better placed player
(better seed or higher in the standings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

PlayerId: TypeAlias = int | str

FIRST = "F"
SECOND = "S"


class PairingError(ValueError):
    """No pairing satisfies the rules (for example every remaining pair has already met)."""


@dataclass(frozen=True)
class Pairing:
    """One match: ``first`` has the first move (in the first game, if the match has several)."""

    first: PlayerId
    second: PlayerId

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError(f"{self.first} cannot be paired with themselves")

    @property
    def players(self) -> tuple[PlayerId, PlayerId]:
        """(first, second)."""
        return (self.first, self.second)

    def involves(self, player: PlayerId) -> bool:
        """Whether ``player`` plays in this match."""
        return player in (self.first, self.second)

    def opponent_of(self, player: PlayerId) -> PlayerId:
        """The other player of the match; ValueError if ``player`` is not in it."""
        if player == self.first:
            return self.second
        if player == self.second:
            return self.first
        raise ValueError(f"{player} does not play in {self.first} v {self.second}")

    def reversed(self) -> Pairing:
        """The same two players with the first move given to the other one."""
        return Pairing(self.second, self.first)


@dataclass(frozen=True)
class RoundPairing:
    """A round: the matches to play, in board order, and the players who sit it out with a bye."""

    pairings: tuple[Pairing, ...]
    byes: tuple[PlayerId, ...] = ()

    @property
    def players(self) -> tuple[PlayerId, ...]:
        """Everyone in the round, playing or with a bye."""
        return tuple(p for pairing in self.pairings for p in pairing.players) + self.byes

    def pairing_of(self, player: PlayerId) -> Pairing | None:
        """The match ``player`` plays in this round, or None (a bye, or not in the round)."""
        return next((p for p in self.pairings if p.involves(player)), None)


def match_games(pairing: Pairing, games: int) -> tuple[Pairing, ...]:
    """The games of a match of ``games`` games: the first move alternates, starting with
    ``pairing.first``."""
    if games < 1:
        raise ValueError(f"a match has at least one game, not {games}")
    return tuple(pairing if i % 2 == 0 else pairing.reversed() for i in range(games))


def first_move_histories(rounds: Iterable[Iterable[Pairing]]) -> dict[PlayerId, str]:
    """Each player's first-move record, oldest first: "F" for a first move, "S" for a second.

    Byes are not games and leave no mark.
    """
    histories: dict[PlayerId, str] = {}
    for pairings in rounds:
        for pairing in pairings:
            histories[pairing.first] = histories.get(pairing.first, "") + FIRST
            histories[pairing.second] = histories.get(pairing.second, "") + SECOND
    return histories


def first_move_balance(history: str) -> int:
    """First moves minus second moves in one player's record."""
    return history.count(FIRST) - history.count(SECOND)


def first_mover(better: PlayerId, other: PlayerId, histories: Mapping[PlayerId, str]) -> Pairing:
    """Pair ``better`` (the better seed or higher in the standings) with ``other``, giving the
    first move by the module's balancing rule."""
    mine, theirs = histories.get(better, ""), histories.get(other, "")
    balance_mine, balance_theirs = first_move_balance(mine), first_move_balance(theirs)
    if balance_mine != balance_theirs:
        return Pairing(better, other) if balance_mine < balance_theirs else Pairing(other, better)
    # Alternate: look back to the latest game where the two records differ.
    for a, b in zip(reversed(mine), reversed(theirs), strict=False):
        if a != b:
            return Pairing(better, other) if a == SECOND else Pairing(other, better)
    return Pairing(better, other)


def check_unique_players(players: Sequence[PlayerId]) -> None:
    """Raise ValueError if a player is listed twice."""
    seen: set[PlayerId] = set()
    for player in players:
        if player in seen:
            raise ValueError(f"{player} is listed twice")
        seen.add(player)
