"""The pure core together: a 4-player poly-ludic Swiss to its final standings, by hand.

Four players, seeded ann, bob, cat, dan; games buffalo, entropy, chameleon at PG 5, PS 3,
PC 1, LP 0. In every match the player with the first move chooses the first game open to
them in the listed order, and wins.
"""

from __future__ import annotations

from pbmserv.tournaments.pairing import Pairing, RoundPairing
from pbmserv.tournaments.polyludic import Playability, choose_game, polyludic_rules
from pbmserv.tournaments.standings import MatchResult, Standing, compute_standings, game_result
from pbmserv.tournaments.swiss import swiss_pairings

PLAYERS = ["ann", "bob", "cat", "dan"]
RULES = polyludic_rules(dict.fromkeys(["buffalo", "entropy", "chameleon"], 5), ps=3, pc=1, lp=0)


class PolyludicSwiss:
    def __init__(self) -> None:
        self.history: list[RoundPairing] = []
        self.results: list[MatchResult] = []
        self.tables = {p: Playability.start(RULES) for p in PLAYERS}
        self.chosen: list[str] = []

    def standings(self) -> tuple[Standing, ...]:
        return compute_standings(PLAYERS, self.results, tiebreak="buchholz")

    def play_round(self) -> RoundPairing:
        paired = swiss_pairings(self.standings(), self.history, rounds=3)
        self.history.append(paired)
        for pairing in paired.pairings:
            chooser, opponent = pairing.first, pairing.second
            game = self.tables[chooser].playable()[0]
            _, self.tables[chooser], self.tables[opponent] = choose_game(
                self.tables[chooser], self.tables[opponent], game
            )
            self.chosen.append(game)
            self.results.append(game_result(pairing, chooser))
            for player in pairing.players:
                self.tables[player] = self.tables[player].after_match()
        return paired


def test_a_polyludic_swiss_to_its_final_standings() -> None:
    tournament = PolyludicSwiss()

    # Round 1: top half v bottom half; the better seeds move first and choose Buffalo (5 -> 2).
    assert tournament.play_round().pairings == (Pairing("ann", "cat"), Pairing("bob", "dan"))
    assert {p: t.values for p, t in tournament.tables.items()} == dict.fromkeys(PLAYERS, (2, 5, 5))

    # Round 2: winners v winners, losers v losers. Buffalo again (2 -> -1): with LP 0 one
    # negative game is too many, so PC 1 is added once (PP back to 0).
    assert tournament.play_round().pairings == (Pairing("ann", "bob"), Pairing("cat", "dan"))
    assert {p: t.values for p, t in tournament.tables.items()} == dict.fromkeys(PLAYERS, (0, 6, 6))

    # Round 3: the only pairs left. dan (second, second) moves first against ann (first,
    # first); bob and cat are level, and bob moved second last time. Buffalo is open again at
    # 0; it drops to -3, and PC is added three times.
    assert tournament.play_round().pairings == (Pairing("dan", "ann"), Pairing("bob", "cat"))
    assert tournament.chosen == ["buffalo"] * 6
    assert {p: t.values for p, t in tournament.tables.items()} == dict.fromkeys(PLAYERS, (0, 9, 9))

    # ann W W L = 2, bob W L W = 2, cat L W L = 1, dan L L W = 1.
    # Buchholz: ann cat 1 + bob 2 + dan 1 = 4; bob dan 1 + ann 2 + cat 1 = 4;
    # cat ann 2 + dan 1 + bob 2 = 5; dan bob 2 + cat 1 + ann 2 = 5.
    assert tournament.standings() == (
        Standing("ann", 2.0, 4.0, 1),
        Standing("bob", 2.0, 4.0, 1),
        Standing("cat", 1.0, 5.0, 3),
        Standing("dan", 1.0, 5.0, 3),
    )
