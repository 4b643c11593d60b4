"""A tournament's pure state, rebuilt from its rows every time it is needed.

Nothing about a tournament lives only in memory: the rounds paired so far, the results, the
standings, the knockout bracket and the next round all follow from the entries and match rows
through the pure core (:mod:`pbmserv.tournaments`), so a server restarted in mid-round pairs
the next round exactly as the one that stopped would have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pbmserv.db.models import Entry, Match
from pbmserv.tournaments import (
    Format,
    Knockout,
    MatchResult,
    Pairing,
    PairingError,
    PlayerId,
    RoundPairing,
    Standing,
    berger_rounds,
    compute_standings,
    knockout_bracket,
    swiss_pairings,
)

MAIN, CONSOLATION, FINAL = "main", "consolation", "final"


@dataclass(frozen=True)
class PlannedRound:
    """The next round to create: each match with its bracket, and the byes."""

    pairings: tuple[tuple[Pairing, str], ...]
    byes: tuple[tuple[PlayerId, str], ...] = ()


@dataclass(frozen=True)
class Progress:
    """What the rows say, as pure values. Players are user ids."""

    format: Format
    params: dict[str, Any]
    seeds: tuple[int, ...]  # every entrant, best seed first
    withdrawn: frozenset[int]
    rounds: tuple[RoundPairing, ...]  # every round paired so far
    #: The winners of each complete round's matches (byes apart), round by round.
    round_winners: tuple[tuple[int, ...], ...]
    results: tuple[MatchResult, ...]
    byes: tuple[int, ...]

    @property
    def active(self) -> tuple[int, ...]:
        """The players still in the tournament, in seed order."""
        return tuple(p for p in self.seeds if p not in self.withdrawn)

    def standings(self, players: Sequence[int] | None = None) -> tuple[Standing, ...]:
        """The standings of ``players`` (everyone by default) with the format's tie-break.
        A knockout counts matches won: its byes only take a player through."""
        return compute_standings(
            self.seeds if players is None else players,
            self.results,
            byes=() if self.format is Format.KNOCKOUT else self.byes,
            tiebreak=self.format.tiebreak,
        )

    def knockout(self) -> Knockout:
        """The bracket after every complete round."""
        state = knockout_bracket(self.seeds, bool(self.params.get("repechage")))
        for winners in self.round_winners:
            state = state.record_round(winners)
        return state

    def next_round(self) -> PlannedRound | None:
        """The round to pair once the current one is over; None when the tournament is over."""
        if self.format is Format.KNOCKOUT:
            return _next_knockout_round(self.knockout())
        if self.format in (Format.ROUND_ROBIN, Format.DOUBLE_ROUND_ROBIN):
            schedule = berger_rounds(self.seeds, self.format is Format.DOUBLE_ROUND_ROBIN)
            if len(self.rounds) >= len(schedule):
                return None
            return _planned(schedule[len(self.rounds)])
        planned = self.params["rounds"]
        if len(self.rounds) >= planned or len(self.active) < 2:
            return None
        try:
            paired = swiss_pairings(
                self.standings(self.active),
                self.rounds,
                rounds=planned,
                system=self.format.value,
            )
        except PairingError:
            # Withdrawals can leave players who have all met: the tournament ends there.
            return None
        return _planned(paired)


def pairing_of(match: Match) -> Pairing:
    """The match's two players, the first to move first (a bye has no pairing)."""
    if match.second_id is None:
        raise ValueError(f"match {match.id} is a bye")
    return Pairing(match.first_id, match.second_id)


def _planned(paired: RoundPairing, bracket: str = "") -> PlannedRound:
    return PlannedRound(
        tuple((p, bracket) for p in paired.pairings), tuple((b, bracket) for b in paired.byes)
    )


def _next_knockout_round(state: Knockout) -> PlannedRound | None:
    if state.finished:
        return None
    pending = state.pending
    main = state.main[-1] if state.main_winner is None else None

    def bracket(pairing: Pairing) -> str:
        if pairing == state.grand_final:
            return FINAL
        return MAIN if main is not None and pairing in main.pairings else CONSOLATION

    byes = tuple(
        (player, MAIN if main is not None and player in main.byes else CONSOLATION)
        for player in pending.byes
    )
    return PlannedRound(tuple((p, bracket(p)) for p in pending.pairings), byes)


def progress_of(
    format_: Format, params: dict[str, Any], entries: Sequence[Entry], matches: Sequence[Match]
) -> Progress:
    """The pure state of a tournament from its entries (seed order) and its matches (round
    order)."""
    by_round: dict[int, list[Match]] = {}
    for match in matches:
        by_round.setdefault(match.round, []).append(match)
    rounds = []
    round_winners = []
    for number in sorted(by_round):
        played = [m for m in by_round[number] if m.second_id is not None]
        rounds.append(
            RoundPairing(
                tuple(pairing_of(m) for m in played),
                tuple(m.first_id for m in by_round[number] if m.second_id is None),
            )
        )
        if all(m.status == "done" for m in by_round[number]):
            round_winners.append(tuple(m.winner_id for m in played if m.winner_id is not None))
    done = [m for m in matches if m.status == "done"]
    return Progress(
        format=format_,
        params=params,
        seeds=tuple(e.user_id for e in entries),
        withdrawn=frozenset(e.user_id for e in entries if e.withdrawn),
        rounds=tuple(rounds),
        round_winners=tuple(round_winners),
        results=tuple(
            MatchResult(m.first_id, m.second_id, m.points)
            for m in done
            if m.second_id is not None and m.points is not None
        ),
        byes=tuple(m.first_id for m in done if m.second_id is None),
    )
