"""Poly-ludic play: the seed's worked numbers (PG 5, PS 3), the PC/LP loop, and the checks."""

from __future__ import annotations

from fractions import Fraction

import pytest

from pbmserv.tournaments.polyludic import (
    Playability,
    PolyludicError,
    TableRow,
    choose_game,
    polyludic_rules,
)

GAMES = ("buffalo", "entropy", "extinction", "chameleon")


def seed_rules(pc: int = 2, lp: str = "1/4"):
    """The seed's example: PG 5 for every game, PS 3."""
    return polyludic_rules(dict.fromkeys(GAMES, 5), ps=3, pc=pc, lp=lp)


def test_the_seeds_worked_numbers_step_by_step() -> None:
    rules = seed_rules()
    ann, bob = Playability.start(rules), Playability.start(rules)
    assert ann.values == (5, 5, 5, 5)

    # ann has the first move and chooses Buffalo: 5 - 3 = 2 in both tables.
    game, ann, bob = choose_game(ann, bob, "Buffalo")
    assert game == "buffalo"
    assert ann.pg("buffalo") == bob.pg("buffalo") == 2
    ann, bob = ann.after_match(), bob.after_match()
    assert ann.values == bob.values == (2, 5, 5, 5)

    # Chosen again: 2 - 3 = -1, and Buffalo is closed to them. PP = 1/4 is not above LP 1/4.
    _, ann, bob = choose_game(ann, bob, "buffalo")
    assert ann.pg("buffalo") == -1 and ann.pp == Fraction(1, 4)
    ann = ann.after_match()
    assert ann.values == (-1, 5, 5, 5)
    assert ann.playable() == ("entropy", "extinction", "chameleon")
    with pytest.raises(PolyludicError, match="you cannot choose buffalo: its PG is -1"):
        choose_game(ann, bob, "buffalo")

    # Entropy twice: two of four games negative, PP = 1/2 > 1/4, so PC 2 goes to every PG;
    # then PP = 0 and the loop stops.
    for _ in range(2):
        _, ann, bob = choose_game(ann, bob, "entropy")
    assert ann.values == (-1, -1, 5, 5) and ann.pp == Fraction(1, 2)
    ann = ann.after_match()
    assert ann.values == (1, 1, 7, 7) and ann.pp == 0
    assert ann.playable() == GAMES


def test_the_loop_adds_pc_while_pp_exceeds_lp() -> None:
    rules = seed_rules(pc=2, lp="1/4")
    # The opponent chose Buffalo and Entropy for this player long after they were closed.
    table = Playability.from_mapping(
        rules, {"buffalo": -4, "entropy": -4, "extinction": 2, "chameleon": 5}
    )
    once = Playability(rules, tuple(pg + 2 for pg in table.values))
    assert once.values == (-2, -2, 4, 7) and once.pp == Fraction(1, 2)  # still above LP
    assert table.after_match().values == (0, 0, 6, 9)  # twice, then PP = 0


def test_pp_equal_to_lp_is_not_exceeded() -> None:
    table = Playability.from_mapping(
        seed_rules(lp="0.5"), {"buffalo": -1, "entropy": -1, "extinction": 0, "chameleon": 0}
    )
    assert table.pp == Fraction(1, 2)
    assert table.after_match() == table


def test_with_lp_zero_every_negative_pg_is_lifted() -> None:
    table = Playability.from_mapping(
        seed_rules(pc=1, lp="0"), {"buffalo": -3, "entropy": 0, "extinction": 2, "chameleon": 5}
    )
    assert table.after_match().values == (0, 3, 5, 8)


def test_the_opponents_table_does_not_limit_the_choice() -> None:
    rules = seed_rules()
    ann = Playability.start(rules)
    bob = Playability.from_mapping(
        rules, {"buffalo": -1, "entropy": 5, "extinction": 5, "chameleon": 5}
    )
    _, ann, bob = choose_game(ann, bob, "buffalo")
    assert ann.pg("buffalo") == 2 and bob.pg("buffalo") == -4


def test_the_chooser_always_has_a_game_after_the_loop() -> None:
    rules = seed_rules(pc=1, lp="0.75")
    ann, bob = Playability.start(rules), Playability.start(rules)
    for _ in range(40):
        game = ann.playable()[-1]
        _, ann, bob = choose_game(ann, bob, game)
        ann, bob = ann.after_match(), bob.after_match()
        assert ann.playable() and bob.playable()
        assert ann.pp <= rules.lp and bob.pp <= rules.lp


def test_a_players_own_table() -> None:
    table = Playability.from_mapping(
        seed_rules(), {"buffalo": -1, "entropy": 2, "extinction": 5, "chameleon": 0}
    )
    assert table.rows() == (
        TableRow("buffalo", -1, False),
        TableRow("entropy", 2, True),
        TableRow("extinction", 5, True),
        TableRow("chameleon", 0, True),
    )
    assert table.as_mapping() == {"buffalo": -1, "entropy": 2, "extinction": 5, "chameleon": 0}


def test_unknown_games_are_named_with_the_choices() -> None:
    rules = seed_rules()
    with pytest.raises(PolyludicError, match="'go' is not a game of this tournament: the games"):
        choose_game(Playability.start(rules), Playability.start(rules), "go")
    with pytest.raises(PolyludicError, match="the table has no PG for chameleon"):
        Playability.from_mapping(rules, {"buffalo": 1, "entropy": 1, "extinction": 1})


@pytest.mark.parametrize(
    ("ps", "pc", "message"),
    [
        (3, 3, r"PS \(3\) must be greater than PC \(3\)"),
        (2, 3, r"PS \(2\) must be greater than PC \(3\)"),
        (3, 0, r"PC \(0\) must be at least 1"),
        (3.5, 1, r"PS \(3.5\) must be a whole number"),
    ],
)
def test_bad_ps_and_pc_are_rejected(ps: int, pc: int, message: str) -> None:
    with pytest.raises(PolyludicError, match=message):
        polyludic_rules(dict.fromkeys(GAMES, 5), ps=ps, pc=pc, lp=0.25)


@pytest.mark.parametrize(
    ("pg", "lp", "message"),
    [
        ({}, 0.25, "lists at least one game"),
        ({"buffalo": 5, "Buffalo": 5}, 0.25, "Buffalo is listed twice"),
        ({"buffalo": -1}, 0.25, r"the PG of buffalo \(-1\) must not be negative"),
        ({"buffalo": 5}, 1, r"LP \(1\) must be at least 0 and less than 1"),
        ({"buffalo": 5}, "-0.1", r"LP \(-0.1\) must be at least 0"),
        ({"buffalo": 5}, "half", r"LP \(half\) must be a number such as 0.25 or 1/4"),
    ],
)
def test_bad_games_and_levels_are_rejected(pg: dict, lp: object, message: str) -> None:
    with pytest.raises(PolyludicError, match=message):
        polyludic_rules(pg, ps=3, pc=2, lp=lp)


def test_lp_is_exact() -> None:
    assert polyludic_rules({"buffalo": 5}, ps=3, pc=2, lp=0.1).lp == Fraction(1, 10)
    assert seed_rules().lp == Fraction(1, 4)
