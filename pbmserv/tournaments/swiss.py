"""Swiss and Italo-Swiss pairing: a whole round chosen at once by maximum-weight matching.

Both systems rank the players by score (stable: within a score the order given, usually the
previous tie-break and then the seeds) and choose the round's pairs by one global matching
(networkx's ``max_weight_matching``) over the pairs still allowed. What is allowed and what is
preferred, most important first:

1. hard: no rematch; when the field is odd one bye a round, never twice to one player;
2. hard: the rounds still to play can all be paired (a look-ahead search, see
   :mod:`pbmserv.tournaments.completion`), so with enough rounds the tournament always completes
   as a full round robin (n-1 rounds, or n with a bye each round when n is odd) and never
   dead-ends (where that is no longer possible, after a withdrawal say, it looks as many
   rounds ahead as it can);
3. the first-move limits: nobody's first moves may exceed their second moves by more than 2 (or
   the reverse), and nobody gets the same side three games running;
4. equal scores: the sum of the squared score differences of the pairs is kept smallest, and the
   bye goes to the lowest score;
5. first-move wishes: a player does not reach a difference of 2, nor repeat their last side;
6. the system's order. Swiss (the Dutch way): within a score group the top half meets the bottom
   half, 1 v n/2+1, 2 v n/2+2..., reordering the bottom half before swapping players between
   the halves; a player who must float leaves from the bottom of the group and meets the top of
   the next. Italo-Swiss: neighbours in the standings, 1 v 2, 3 v 4...
   The bye goes to the lowest-ranked player.

Each level outweighs everything below it put together. The first move in each pair is then given
by :func:`pbmserv.tournaments.pairing.first_mover`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pbmserv.tournaments.completion import (
    BudgetExhausted,
    Pairs,
    disjoint_perfect_matchings,
    without,
)
from pbmserv.tournaments.formats import Format
from pbmserv.tournaments.matching import Edge, Matching, best_matching
from pbmserv.tournaments.pairing import (
    FIRST,
    SECOND,
    Pairing,
    PairingError,
    PlayerId,
    RoundPairing,
    check_unique_players,
    first_move_balance,
    first_move_histories,
    first_mover,
)
from pbmserv.tournaments.standings import Standing

SWISS = Format.SWISS.value
ITALO = Format.ITALO_SWISS.value
SYSTEMS = (SWISS, ITALO)

# Steps of the look-ahead search per check, and candidate matchings tried per round: enough
# for any field up to 16 players, and a bound on the time a large field can take.
SEARCH_BUDGET = 50_000
CANDIDATES = 200


def swiss_pairings(
    standings: Sequence[Standing],
    history: Sequence[RoundPairing] = (),
    *,
    rounds: int | None = None,
    system: str = SWISS,
) -> RoundPairing:
    """The next round for the players in ``standings`` (their score orders them).

    ``history`` holds the rounds already paired (for rematches, byes and first moves); players
    no longer in ``standings`` (withdrawn) are left out. ``rounds`` is the planned number of
    rounds; the pairing keeps the rounds after this one pairable (None: as many as a full round
    robin has). Raises PairingError when no round can be paired at all.
    """
    if system not in SYSTEMS:
        raise ValueError(f"unknown pairing system {system!r}: choose swiss or italo")
    field = _Field.build(standings, history)
    weights = _weights(field, system)
    planned = None if rounds is None else rounds - len(history) - 1
    return field.round_from(_choose(field, weights, planned))


@dataclass(frozen=True)
class _Field:
    """The players ranked 0..n-1, with a bye vertex n when n is odd."""

    players: tuple[PlayerId, ...]
    halves: tuple[int, ...]  # score in half points
    groups: tuple[tuple[int, int], ...]  # each player's score group, as (first, last) index
    allowed: tuple[int, ...]  # bit mask of the vertices each vertex may still meet
    histories: dict[PlayerId, str]

    @classmethod
    def build(cls, standings: Sequence[Standing], history: Sequence[RoundPairing]) -> _Field:
        """Rank the players and take out the pairs and byes ``history`` has used up."""
        ranked = sorted(standings, key=lambda s: -s.score)  # stable: keeps the given order
        players = tuple(s.player for s in ranked)
        check_unique_players(players)
        if len(players) < 2:
            raise PairingError("at least two players are needed to pair a round")
        index = {p: i for i, p in enumerate(players)}
        n = len(players)
        vertices = n + n % 2
        allowed = [((1 << vertices) - 1) & ~(1 << v) for v in range(vertices)]

        def forbid(a: int, b: int) -> None:
            allowed[a] &= ~(1 << b)
            allowed[b] &= ~(1 << a)

        for past in history:
            for pairing in past.pairings:
                if pairing.first in index and pairing.second in index:
                    forbid(index[pairing.first], index[pairing.second])
            for player in past.byes:
                if player in index and n % 2:
                    forbid(index[player], n)
        halves = tuple(round(2 * s.score) for s in ranked)
        return cls(
            players=players,
            halves=halves,
            groups=_score_groups(halves),
            allowed=tuple(allowed),
            histories=first_move_histories(r.pairings for r in history),
        )

    @property
    def bye(self) -> int | None:
        """The bye vertex, when the field is odd."""
        n = len(self.players)
        return n if n % 2 else None

    def pairing(self, a: int, b: int) -> Pairing:
        """Players ``a`` < ``b`` (ranks) paired. The first move goes the way that breaks fewer
        first-move limits, then fewer wishes; when both ways are alike, by the balancing rule."""
        balanced = first_mover(self.players[a], self.players[b], self.histories)
        return min((balanced, balanced.reversed()), key=self.first_move_cost)

    def first_move_cost(self, pairing: Pairing) -> tuple[int, int]:
        """(limits broken, wishes missed) by ``pairing``: a limit is a first-move difference
        beyond 2 or the same side three games running; a wish, reaching a difference of 2 (it
        counts twice) or repeating the last side."""
        limits = wishes = 0
        for player, side in ((pairing.first, FIRST), (pairing.second, SECOND)):
            before = self.histories.get(player, "")
            after = before + side
            balance = abs(first_move_balance(after))
            limits += balance > 2 or after.endswith(side * 3)
            wishes += 2 * (balance == 2) + before.endswith(side)
        return limits, wishes

    def round_from(self, matching: Matching) -> RoundPairing:
        """The round a matching of vertices stands for, boards in the order of the standings."""
        byes = tuple(self.players[a] for a, b in matching if b == self.bye)
        boards = sorted((a, b) for a, b in matching if b != self.bye)
        return RoundPairing(tuple(self.pairing(a, b) for a, b in boards), byes)


def _score_groups(halves: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    groups = []
    start = 0
    for i in range(1, len(halves) + 1):
        if i == len(halves) or halves[i] != halves[start]:
            groups.extend([(start, i - 1)] * (i - start))
            start = i
    return tuple(groups)


# --- weights ------------------------------------------------------------------------------


def _weights(field: _Field, system: str) -> dict[Edge, int]:
    """Edge weights that make the heaviest perfect matching the best pairing (see the module
    docstring): each level's penalty, scaled to outweigh all the levels below it."""
    penalties = {
        (a, b): _penalties(field, system, a, b)
        for a in range(len(field.allowed))
        for b in range(a + 1, len(field.allowed))
        if field.allowed[a] >> b & 1
    }
    if not penalties:
        return {}
    pairs_per_round = len(field.allowed) // 2
    scale = 1
    scales = []
    for level in reversed(range(4)):
        scales.append(scale)
        scale *= pairs_per_round * max(p[level] for p in penalties.values()) + 1
    scales.reverse()
    top = scale  # exceeds any edge's total penalty, so every weight is positive
    return {
        edge: top - sum(s * p for s, p in zip(scales, levels, strict=True))
        for edge, levels in penalties.items()
    }


def _penalties(field: _Field, system: str, a: int, b: int) -> tuple[int, int, int, int]:
    """(first-move limits, score difference, first-move wishes, order) for ranks a < b."""
    if b == field.bye:
        lowest = min(field.halves)
        last = len(field.players) - 1
        return (0, (field.halves[a] - lowest) ** 2, 0, (last - a) ** 2)
    limits, wishes = field.first_move_cost(field.pairing(a, b))
    score = (field.halves[a] - field.halves[b]) ** 2
    order = _dutch_order(field, a, b) if system == SWISS else (b - a - 1) ** 2
    return (limits, score, wishes, order)


def _dutch_order(field: _Field, a: int, b: int) -> int:
    """How far ranks a < b are from a Dutch pair: top half v bottom half of one score group,
    or the bottom of a group v the top of the next."""
    (start, end), (b_start, _) = field.groups[a], field.groups[b]
    if start == b_start:
        half = (end - start + 1) // 2
        # Pairing within one half (an exchange) is worse than any reordering of the bottom
        # half (a transposition), as in the Dutch system.
        exchange = (b - start < half) or (a - start >= half)
        return (b - a - half) ** 2 + exchange * half**2
    return (end - a) ** 2 + (b - b_start) ** 2


# --- choosing the round -------------------------------------------------------------------


def _choose(field: _Field, weights: dict[Edge, int], planned: int | None) -> Matching:
    """The best matching that leaves the next ``planned`` rounds pairable (None: as many as
    every player still has possible opponents), looking less far ahead only if that cannot be
    done (after a withdrawal, say, or past the planned rounds)."""
    vertices = len(field.allowed)
    fewest_opponents = min(mask.bit_count() for mask in field.allowed)
    ahead = fewest_opponents - 1 if planned is None else min(planned, fewest_opponents - 1)
    for depth in range(max(ahead, 0), 0, -1):
        witness = _pairable(field.allowed, depth + 1)
        if witness is None:
            continue

        def leaves_pairable(matching: Matching, depth: int = depth) -> bool:
            return _pairable(without(field.allowed, matching), depth) is not None

        best = best_matching(vertices, weights, leaves_pairable, CANDIDATES)
        # The witness's first round is a sure fallback when the best ones are out of reach.
        return best or frozenset((min(e), max(e)) for e in witness[0])
    best = best_matching(vertices, weights, lambda _: True, 1)
    if best is None:
        raise PairingError("no pairing is possible: the remaining players have all met")
    return best


def _pairable(allowed: tuple[int, ...], rounds: int) -> list[Pairs] | None:
    """Disjoint perfect matchings for ``rounds`` rounds, or None (also when the search is too
    long to tell)."""
    try:
        return disjoint_perfect_matchings(allowed, rounds, SEARCH_BUDGET)
    except BudgetExhausted:
        return None
