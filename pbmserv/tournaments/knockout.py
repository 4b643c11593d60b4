"""Knockout: a seeded bracket, byes for the top seeds, and an optional repechage.

The bracket has room for the next power of two. Seeds take their places in the standard order
(for 16: 1 v 16, 8 v 9, 4 v 13, 5 v 12, 2 v 15, 7 v 10, 3 v 14, 6 v 11), so seeds 1 and 2 are in
opposite halves and can meet only in the final, seeds 1-4 only in the semi-finals, and so on.
The places of the missing seeds (n+1 up) are byes, and they fall opposite the top seeds; every
first-round slot holds at least one player, so the later rounds never have a hole.

Repechage: the losers of the first round play a consolation knockout of their own (seeded in
their original order, byes again for its top seeds), alongside the main rounds. Its winner meets
the winner of the main draw in one more match, the grand final, whose winner wins the
tournament; the main winner, unbeaten so far, gets no second chance. (With two players the
grand final is a rematch of the final.) A consolation draw of one player needs no match.

The state is an immutable :class:`Knockout`: :attr:`Knockout.pending` lists the matches to play
now, and :meth:`Knockout.record_round` takes their winners and pairs the next round. A knockout
match needs a winner: when its games end level the caller settles it (a deciding game, say)
before recording the round. First moves follow the balancing rule of
:mod:`pbmserv.tournaments.pairing`, the better seed moving first when the records are level.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from pbmserv.tournaments.pairing import (
    Pairing,
    PlayerId,
    RoundPairing,
    check_unique_players,
    first_move_histories,
    first_mover,
)

Histories = Mapping[PlayerId, str]  # first-move records of the rounds played


@dataclass(frozen=True)
class Bye:
    """A bracket place whose player goes through without playing."""

    player: PlayerId


@dataclass(frozen=True)
class KnockoutRound:
    """One round in bracket order: the winners of matches 2i and 2i+1 meet in the next round."""

    matches: tuple[Pairing | Bye, ...]

    @property
    def pairings(self) -> tuple[Pairing, ...]:
        """The matches to play, in bracket order."""
        return tuple(m for m in self.matches if isinstance(m, Pairing))

    @property
    def byes(self) -> tuple[PlayerId, ...]:
        """The players through without a match."""
        return tuple(m.player for m in self.matches if isinstance(m, Bye))

    @property
    def players(self) -> tuple[PlayerId, ...]:
        """Everyone in the round, in bracket order."""
        return tuple(
            p for m in self.matches for p in (m.players if isinstance(m, Pairing) else (m.player,))
        )

    def winners(self, winners: Collection[PlayerId]) -> tuple[PlayerId, ...]:
        """Who goes through, in bracket order: the winner of each match, and each bye."""
        return tuple(m.player if isinstance(m, Bye) else _winner(m, winners) for m in self.matches)

    def losers(self, winners: Collection[PlayerId]) -> tuple[PlayerId, ...]:
        """Who is knocked out, in bracket order."""
        return tuple(p.opponent_of(_winner(p, winners)) for p in self.pairings)


def standard_seed_order(size: int) -> tuple[int, ...]:
    """The seeds 1..size in bracket order, for a power of two ``size``: the two seeds of a
    first-round match always add up to size + 1, and each half repeats the pattern."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"a bracket has a power of two places, not {size}")
    order = [1]
    while len(order) < size:
        places = 2 * len(order) + 1
        order = [seed for top in order for seed in (top, places - top)]
    return tuple(order)


@dataclass(frozen=True)
class Knockout:
    """A knockout in progress. Build it with :func:`knockout_bracket`."""

    seeds: tuple[PlayerId, ...]
    repechage: bool
    main: tuple[KnockoutRound, ...]
    consolation: tuple[KnockoutRound, ...] = ()
    main_winner: PlayerId | None = None
    consolation_winner: PlayerId | None = None
    grand_final: Pairing | None = None
    champion: PlayerId | None = None

    @property
    def finished(self) -> bool:
        """True once the champion is known."""
        return self.champion is not None

    @property
    def pending(self) -> RoundPairing:
        """The matches to play now (main draw, consolation draw, grand final) and the byes."""
        rounds = self._pending_rounds()
        pairings = [p for r in rounds for p in r.pairings]
        if self.grand_final is not None and self.champion is None:
            pairings.append(self.grand_final)
        return RoundPairing(tuple(pairings), tuple(b for r in rounds for b in r.byes))

    def _pending_rounds(self) -> list[KnockoutRound]:
        rounds = []
        if self.main_winner is None:
            rounds.append(self.main[-1])
        if self.consolation and self.consolation_winner is None:
            rounds.append(self.consolation[-1])
        return rounds

    def record_round(self, winners: Collection[PlayerId]) -> Knockout:
        """The next state, given the winner of every pending match (byes need none).

        ValueError if a pending match has no winner or two, or a winner plays no pending match.
        """
        if self.finished:
            raise ValueError("the knockout is over")
        _check_winners(self.pending.pairings, winners)
        if self.grand_final is not None:
            return replace(self, champion=_winner(self.grand_final, winners))
        # Every round paired so far has now been played.
        played = first_move_histories(r.pairings for r in self.main + self.consolation)
        state = self
        if self.main_winner is None:
            state = state._advance_main(winners, played)
        if self.consolation and self.consolation_winner is None:
            state = state._advance_consolation(winners, played)
        return state._settle(played)

    def _advance_main(self, winners: Collection[PlayerId], played: Histories) -> Knockout:
        current = self.main[-1]
        through = current.winners(winners)
        state = self
        if self.repechage and len(self.main) == 1:
            state = state._start_consolation(current.losers(winners), played)
        if len(through) == 1:
            return replace(state, main_winner=through[0])
        return replace(state, main=state.main + (state._next_round(through, played),))

    def _advance_consolation(self, winners: Collection[PlayerId], played: Histories) -> Knockout:
        through = self.consolation[-1].winners(winners)
        if len(through) == 1:
            return replace(self, consolation_winner=through[0])
        next_round = self._next_round(through, played)
        return replace(self, consolation=self.consolation + (next_round,))

    def _start_consolation(self, losers: Sequence[PlayerId], played: Histories) -> Knockout:
        seed_order = {p: i for i, p in enumerate(self.seeds)}
        ranked = sorted(losers, key=seed_order.__getitem__)
        if len(ranked) == 1:
            return replace(self, consolation_winner=ranked[0])
        return replace(self, consolation=(self._first_round(ranked, played),))

    def _settle(self, played: Histories) -> Knockout:
        """Crown the main winner, or pair the grand final once both winners are known."""
        if not self.repechage:
            return replace(self, champion=self.main_winner)
        if self.main_winner is None or self.consolation_winner is None:
            return self
        # The main winner is preferred for the first move when the records are level.
        final = first_mover(self.main_winner, self.consolation_winner, played)
        return replace(self, grand_final=final)

    def _better(self, a: PlayerId, b: PlayerId) -> tuple[PlayerId, PlayerId]:
        order = {p: i for i, p in enumerate(self.seeds)}
        return (a, b) if order[a] < order[b] else (b, a)

    def _pair(self, a: PlayerId, b: PlayerId, played: Histories) -> Pairing:
        better, other = self._better(a, b)
        return first_mover(better, other, played)

    def _next_round(self, through: Sequence[PlayerId], played: Histories) -> KnockoutRound:
        pairs = zip(through[::2], through[1::2], strict=True)
        return KnockoutRound(tuple(self._pair(a, b, played) for a, b in pairs))

    def _first_round(self, ranked: Sequence[PlayerId], played: Histories) -> KnockoutRound:
        """A first round for ``ranked`` (best first): standard seeding, byes to the top."""
        size = 1 << (len(ranked) - 1).bit_length()
        order = standard_seed_order(size)
        matches: list[Pairing | Bye] = []
        for top, bottom in zip(order[::2], order[1::2], strict=True):
            if bottom > len(ranked):
                matches.append(Bye(ranked[top - 1]))
            else:
                matches.append(self._pair(ranked[top - 1], ranked[bottom - 1], played))
        return KnockoutRound(tuple(matches))


def knockout_bracket(
    players_in_seed_order: Sequence[PlayerId], repechage: bool = False
) -> Knockout:
    """A knockout among the players, best seed first, with its first round paired."""
    seeds = tuple(players_in_seed_order)
    check_unique_players(seeds)
    if len(seeds) < 2:
        raise ValueError("a knockout needs at least two players")
    empty = Knockout(seeds=seeds, repechage=repechage, main=())
    return replace(empty, main=(empty._first_round(seeds, {}),))


def _winner(pairing: Pairing, winners: Collection[PlayerId]) -> PlayerId:
    won = [p for p in pairing.players if p in winners]
    if len(won) != 1:
        raise ValueError(
            f"{pairing.first} v {pairing.second} needs exactly one winner, not {len(won)}"
        )
    return won[0]


def _check_winners(pairings: Sequence[Pairing], winners: Collection[PlayerId]) -> None:
    playing = {p for pairing in pairings for p in pairing.players}
    for player in winners:
        if player not in playing:
            raise ValueError(f"{player} plays no match in this round")
    for pairing in pairings:
        _winner(pairing, winners)
