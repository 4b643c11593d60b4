"""Round robin by the Berger tables (FIDE): everyone meets everyone, once or twice.

Players are numbered 1..n in the order given (seed order, or an order drawn by lot). With an odd
number of players a dummy n+1 is added, and whoever the table pairs with it has a bye. The
tables give each player first moves that differ from anyone else's by at most one over a single
round robin; a double round robin repeats the rounds with the first move reversed, so there
every player has exactly as many first moves as second moves.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbmserv.tournaments.pairing import Pairing, PlayerId, RoundPairing, check_unique_players


def berger_table(n: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The Berger table for an even ``n``: per round, the (first, second) numbers, 1-based.

    Table 1 of every round holds player n; it moves second in odd rounds, first in even ones.
    """
    if n < 2 or n % 2:
        raise ValueError(f"a Berger table needs an even number of players, not {n}")
    rotating = n - 1
    rounds = []
    for number in range(1, n):
        # Player n's opponent advances by n/2 places a round around the circle of 1..n-1.
        anchor = (number - 1) * (n // 2) % rotating + 1
        table = [(n, anchor) if number % 2 == 0 else (anchor, n)]
        for step in range(1, n // 2):
            table.append((_on_circle(anchor + step, rotating), _on_circle(anchor - step, rotating)))
        rounds.append(tuple(table))
    return tuple(rounds)


def _on_circle(value: int, size: int) -> int:
    """``value`` taken round the circle 1..size."""
    return (value - 1) % size + 1


def berger_rounds(players: Sequence[PlayerId], double: bool = False) -> tuple[RoundPairing, ...]:
    """Every round of a round robin among ``players`` (Berger numbers in the order given).

    ``double``: a second cycle follows with the same rounds, first moves reversed.
    """
    check_unique_players(players)
    if len(players) < 2:
        raise ValueError("a round robin needs at least two players")
    numbered = list(players) + ([None] if len(players) % 2 else [])
    rounds = tuple(_round(numbered, table) for table in berger_table(len(numbered)))
    if not double:
        return rounds
    return rounds + tuple(
        RoundPairing(tuple(p.reversed() for p in r.pairings), r.byes) for r in rounds
    )


def _round(numbered: list[PlayerId | None], table: tuple[tuple[int, int], ...]) -> RoundPairing:
    pairings = []
    byes = []
    for first_number, second_number in table:
        first, second = numbered[first_number - 1], numbered[second_number - 1]
        if first is None or second is None:
            byes.append(second if first is None else first)
        else:
            pairings.append(Pairing(first, second))
    return RoundPairing(tuple(pairings), tuple(p for p in byes if p is not None))
