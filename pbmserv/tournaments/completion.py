"""Can the remaining rounds still be paired? A search for edge-disjoint perfect matchings.

The Swiss systems use this as their look-ahead. Players (and a "bye" node when the field is odd)
are numbered 0..n-1 and ``allowed[i]`` is a bit mask of whom player i may still meet; the
remaining k rounds can be paired exactly when the graph holds k perfect matchings that share no
edge. Pairing greedily round by round can dead-end (after three rounds of six players forming two
groups of three that met across, the rest is two triangles, which no round can pair), so the
Swiss pairing only accepts a round that leaves a graph in which this search succeeds.

The search is exhaustive but cut short by ``budget`` (nodes visited): it raises BudgetExhausted
when that runs out. It stays small because a round is built around vertex 0 with its partners
in increasing order from round to round (the rounds are unordered, so this loses nothing),
every player must keep at least as many possible opponents as rounds remain, and graphs found
to fail are remembered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

Pairs = tuple[tuple[int, int], ...]  # one perfect matching: a round's pairs


class BudgetExhausted(Exception):
    """The search visited more nodes than it was allowed to."""


def disjoint_perfect_matchings(
    allowed: Sequence[int], rounds: int, budget: int = 200_000
) -> list[Pairs] | None:
    """``rounds`` edge-disjoint perfect matchings of the graph, or None if there are none.

    Raises BudgetExhausted when the search needs more than ``budget`` steps to decide.
    """
    if len(allowed) % 2:
        raise ValueError("a perfect matching needs an even number of vertices")
    if rounds <= 0:
        return []
    return _Search(budget).matchings(tuple(allowed), rounds, -1)


def without(allowed: Sequence[int], matching: Iterable[tuple[int, int]]) -> tuple[int, ...]:
    """The graph ``allowed`` with the pairs of ``matching`` taken out."""
    rest = list(allowed)
    for a, b in matching:
        rest[a] &= ~(1 << b)
        rest[b] &= ~(1 << a)
    return tuple(rest)


class _Search:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.failed: set[tuple[tuple[int, ...], int, int]] = set()

    def _tick(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise BudgetExhausted

    def matchings(
        self, allowed: tuple[int, ...], rounds: int, last_partner: int
    ) -> list[Pairs] | None:
        """``rounds`` disjoint perfect matchings in which vertex 0's partners all exceed
        ``last_partner`` and increase from one matching to the next."""
        if rounds == 0:
            return []
        key = (allowed, rounds, last_partner)
        if key in self.failed:
            return None
        if any(mask.bit_count() < rounds for mask in allowed):
            self.failed.add(key)
            return None
        for matching in self._perfect_matchings(allowed, rounds, last_partner):
            later = self.matchings(without(allowed, matching), rounds - 1, matching[0][1])
            if later is not None:
                return [matching, *later]
        self.failed.add(key)
        return None

    def _perfect_matchings(
        self, allowed: tuple[int, ...], rounds: int, last_partner: int
    ) -> Iterator[Pairs]:
        """Perfect matchings whose first pair is (0, partner) with partner > ``last_partner``
        leaving vertex 0 enough larger partners for the ``rounds - 1`` matchings after it."""
        everyone = (1 << len(allowed)) - 1
        for partner in _bits(allowed[0] >> (last_partner + 1) << (last_partner + 1)):
            if (allowed[0] >> (partner + 1)).bit_count() < rounds - 1:
                break
            unmatched = everyone & ~1 & ~(1 << partner)
            for rest in self._complete(allowed, unmatched):
                yield ((0, partner), *rest)

    def _complete(self, allowed: tuple[int, ...], unmatched: int) -> Iterator[Pairs]:
        """Every way to pair off the vertices in the mask ``unmatched``."""
        self._tick()
        if not unmatched:
            yield ()
            return
        # Branch on the vertex with the fewest partners left: dead ends show up soonest.
        vertex, choices = min(
            ((v, allowed[v] & unmatched) for v in _bits(unmatched)),
            key=lambda item: item[1].bit_count(),
        )
        for partner in _bits(choices):
            for rest in self._complete(allowed, unmatched & ~(1 << vertex) & ~(1 << partner)):
                yield ((vertex, partner), *rest)


def _bits(mask: int) -> Iterator[int]:
    """The positions of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
