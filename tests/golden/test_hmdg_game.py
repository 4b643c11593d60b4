"""A whole Hidden Move Double Gomoku game by mail, from signup to X's win, checked against a
golden transcript.

Every message goes through the real SMTP listener; every reply and board mail comes back
through a real relay (see tests/golden/runner.py). The game shows each branch of a turn:
pieces placed in secret, a reveal that misses (the mover's piece stands, revealed), a reveal
that hits (the move fails), a piece placed in secret on a hidden enemy piece, the first five
announced, and the win with two crossing fives. Two mistaken commands get polite replies.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from pbmserv.games.hmdg import GAME
from tests.golden.runner import check_golden, describe, play_transcript
from tests.support import Received, Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("hmdg_game.txt")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def alice(command: str) -> tuple[str, str, str]:
    return (ALICE, command.replace("PW", "secret1"), "")


def bob(command: str) -> tuple[str, str, str]:
    return (BOB, command.replace("PW", "hunter22"), "")


SETUP = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (CAROL, "signup carol pass3333", ""),
    (ALICE, "help hmdg", ""),
    (ALICE, "hmdg challenge alice bob", ""),
    (CAROL, "hmdg observe 1 carol pass3333", ""),
    alice("hmdg move 1 alice PW E5"),  # the opening x
    bob("hmdg move 1 bob PW o"),  # bob is O and moves first; alice is X
]

# (mover's command, answer): bob is O, alice is X. X aims at column 5 and row E through E5.
TURNS = [
    (bob("hmdg move 1 bob PW C3 row"), alice("hmdg reveal 1 alice PW")),
    (alice("hmdg move 1 alice PW A5 col"), bob("hmdg reveal 1 bob PW")),
    (bob("hmdg move 1 bob PW E7 col"), alice("hmdg reveal 1 alice PW")),
    (alice("hmdg move 1 alice PW B5 col"), bob("hmdg reveal 1 bob PW none")),
    # O guesses B5; X reveals it there: O's move fails.
    (bob("hmdg move 1 bob PW B5 row"), alice("hmdg reveal 1 alice PW B5")),
    (alice("hmdg move 1 alice PW C5 col"), bob("hmdg reveal 1 bob PW")),
    # X reveals C5 against row C: O's point, C4, is revealed but stands.
    (bob("hmdg move 1 bob PW C4 row"), alice("hmdg reveal 1 alice PW C5")),
    (alice("hmdg move 1 alice PW D5 col"), bob("hmdg reveal 1 bob PW")),  # X's first five
]

MIDDLE = [
    (CAROL, "hmdg history 1", ""),
    (CAROL, "hmdg unobserve 1 carol pass3333", ""),
]

LATER_TURNS = [
    (bob("hmdg move 1 bob PW G3 col"), alice("hmdg reveal 1 alice PW")),
    # X's piece goes on E7 in secret, where O has a hidden piece.
    (alice("hmdg move 1 alice PW E7 row"), bob("hmdg reveal 1 bob PW")),
    (bob("hmdg move 1 bob PW G4 col"), alice("hmdg reveal 1 alice PW")),
    (alice("hmdg move 1 alice PW E6 row"), bob("hmdg reveal 1 bob PW")),
    (bob("hmdg move 1 bob PW G5 row"), alice("hmdg reveal 1 alice PW")),
    (alice("hmdg move 1 alice PW E8 col"), bob("hmdg reveal 1 bob PW")),
    (bob("hmdg move 1 bob PW G6 row"), alice("hmdg reveal 1 alice PW")),
]

LAST = [alice("hmdg move 1 alice PW E9 row"), bob("hmdg reveal 1 bob PW")]

MISTAKES = {
    # Played just before the turn of that index in TURNS.
    5: alice("hmdg move 1 alice PW C5"),  # no line announced
    7: bob("hmdg reveal 1 bob PW C3"),  # out of the announced column (after X's D5 col)
}


def _move_text(command: tuple[str, str, str]) -> str:
    words = command[1].split()
    return " ".join(words[5:] if words[1] == "move" else ["reveal", *words[5:]])


def answered_at_once(turns: list) -> list[bool]:
    """For each (move, answer), whether the server answers "none" itself (the line publicly
    holds no hidden piece of the opponent's): then the player sends no answer."""
    state = GAME.new_game({}, random.Random(0))
    at_once = []
    for move in ["E5", "o", *(_move_text(m) for m in [s for pair in turns for s in pair])]:
        if GAME.outcome(state) is not None:
            break
        if move.startswith("reveal") and GAME.to_move(state).stage != "reveal":
            at_once.append(True)
            continue
        if move.startswith("reveal"):
            at_once.append(False)
        (seat,) = GAME.to_move(state).seats
        state = GAME.apply(state, GAME.parse_move(state, seat, move), random.Random(0))
    return at_once


AT_ONCE = answered_at_once([*TURNS, *LATER_TURNS, tuple(LAST)])


def flatten(
    turns: list, at_once: list[bool], mistakes: dict | None = None
) -> list[tuple[str, str, str]]:
    steps = []
    for index, (move, answer) in enumerate(turns):
        if mistakes and index in mistakes and mistakes[index][0] == move[0]:
            steps.append(mistakes[index])
        steps.append(move)
        if mistakes and index in mistakes and mistakes[index][0] != move[0]:
            steps.append(mistakes[index])
        if not at_once[index]:
            steps.append(answer)
    return steps


BEFORE_THE_END = (
    SETUP
    + flatten(TURNS, AT_ONCE, MISTAKES)
    + MIDDLE
    + flatten(LATER_TURNS, AT_ONCE[len(TURNS) :])
    + LAST[:1]
)
THE_END = [LAST[1], bob("hmdg history 1")]

# Points that stay hidden from the other player until the end (none is ever revealed).
O_SECRETS = {"C3", "G3", "G4", "G5", "G6"}
X_SECRETS = {"A5", "D5", "E6", "E8"}  # and E9, announced last


def mentions(messages: list[Received], names: set[str]) -> set[str]:
    text = "\n".join(m.subject + "\n" + m.body for m in messages)
    return {name for name in names if re.search(rf"\b{name}\b", text)}


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    before, early = play_transcript(server, engine, sink, BEFORE_THE_END)
    after, late = play_transcript(server, engine, sink, THE_END)
    transcript = before + "\n" + after
    sent = "\n".join(describe(m) for m in early + late)
    # Facts checked directly, whatever the golden file says.
    assert "hmdg board 1: you won" in transcript and "hmdg board 1: you lost" in transcript
    assert "alice (X) won (X made two lines of five: A5-E5 and E5-E9)" in transcript
    assert "hunter22" not in sent and "secret1" not in sent and "pass3333" not in sent
    assert "X reveals B5: O's move on B5 fails" in transcript
    assert "X reveals C5: O's piece is placed on C4" in transcript
    assert "O reveals nothing: X's piece is placed in secret; X has made a five in a row" in (
        transcript
    )
    assert '"C5" does not say which line to announce: add row or col, like C5 row' in transcript
    assert "C3 is not in column 5; you may reveal only your hidden pieces there" in transcript
    # Until the end, nobody is told a point of the other side's hidden pieces (the help text
    # has examples of its own).
    game_mail = [m for m in early if not m.subject.startswith("Re: help")]
    to = {who: [m for m in game_mail if m.to == who] for who in (ALICE, BOB, CAROL)}
    assert not mentions(to[ALICE], O_SECRETS)
    assert not mentions(to[BOB], X_SECRETS | {"E9"})
    assert not mentions(to[CAROL], O_SECRETS | X_SECRETS | {"E7"})
    # At the end the whole board is shown to both players, and the history has every point.
    assert mentions([m for m in late if m.to == BOB], X_SECRETS | {"E9"}) == X_SECRETS | {"E9"}
    assert "X made two lines of five" in late[-1].body
    # Three of the answers were "none" given at once, never a reveal asked for.
    assert AT_ONCE.count(True) == 3 and "it is your turn to play, not to reveal" not in transcript
    check_golden(transcript, GOLDEN)
