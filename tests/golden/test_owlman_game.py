"""A whole Owlman game by mail, from signup to Owlman's win: the seed's sample opening (with its
capture written as the seed writes it, refused with the capture that really happens), a move
onto a tree refused, and Doc caught in his church tower. Checked against a golden transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.runner import Step, check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("owlman_game.txt")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def white(move: str) -> Step:
    return (ALICE, f"owlman move 1 alice secret1 {move}", "")


def owl(move: str) -> Step:
    return (BOB, f"owlman move 1 bob hunter22 {move}", "")


STEPS: list[Step] = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (CAROL, "signup carol pass3333", ""),
    (ALICE, "help owlman", ""),
    (ALICE, "owlman challenge alice bob", ""),
    (CAROL, "owlman observe 1 carol pass3333", ""),
    white("d3-c4"),
    owl("a8-b7(xd5)"),
    white("d1-d2"),  # a tree
    white("f5-e6"),
    owl("b7-c6(xd5)"),  # as the seed writes it: the step captures e4
    owl("b7-c6"),
    white("d1-c2"),
    owl("c6-d5(xf3)"),
    white("h5-g6"),
    owl("d5-c8"),
    white("e6-d7"),
    owl("c8-f7"),
    white("c4-b5"),
    owl("f7-e4"),
    white("g2-f3"),
    owl("e4-d3"),
    white("b5-a6"),  # White forgets to guard g2
    owl("d3-g2"),
    white("a6-b7"),
    owl("g2 h1"),
    (CAROL, "owlman history 1", ""),
]


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    sent = "\n".join(describe(m) for m in messages)
    assert "owlman board 1: you won" in transcript and "owlman board 1: you lost" in transcript
    assert "b7-c6 captures e4, not d5" in transcript and "is a dark square" in transcript
    assert "b7-c6(xe4)" in transcript and "e4-d3(xc2)" in transcript
    assert "Owlman captured Doc on h1" in transcript
    assert "hunter22" not in sent and "secret1" not in sent
    check_golden(transcript, GOLDEN)
