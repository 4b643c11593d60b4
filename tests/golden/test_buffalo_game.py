"""A whole Rebel Buffalo game by mail, from signup to Black's win, checked against a golden
transcript (see tests/golden/runner.py): a dog enclosed and sent home with dog:, a chief's
capture, a buffalo's target written alone, three mistaken moves refused politely (a buffalo
moving two squares, a dog sent to row 3, a dog crossing the river), the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.runner import Step, check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("buffalo_game.txt")
ALICE, BOB = "alice@example.org", "bob@example.org"


def alice(move: str) -> Step:
    return (ALICE, f"buffalo move 1 alice secret1 {move}", "")


def bob(move: str) -> Step:
    return (BOB, f"buffalo move 1 bob hunter22 {move}", "")


STEPS: list[Step] = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (ALICE, "help buffalo", ""),
    (ALICE, "buffalo challenge -variant=rebel alice bob", ""),
    alice("c7-c6"),
    bob("d2-d5"),
    alice("c6-c5"),
    bob("f2-f3"),
    alice("e7-e5"),  # two squares: refused
    alice("e7-e6"),
    bob("f3-f4"),
    alice("e6-e5 dog:b3"),  # an enclosed dog goes back to row 2: refused
    alice("e6-e5 dog:a2"),  # d5 is enclosed between c5 and e5
    bob("g2-g1"),  # across the river: refused
    bob("f4xe5"),
    alice("c4"),
    bob("e2-c2"),
    alice("k6"),
    bob("e5-f4"),
    alice("k5"),
    bob("f4-g4"),
    alice("k4"),
    bob("g4-h4"),
    alice("k3"),
    bob("h4-i3"),
    alice("k2"),
    bob("i3-j3"),
    alice("k1"),
    (BOB, "buffalo history 1", ""),
]


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    sent = "\n".join(describe(m) for m in messages)
    assert "buffalo board 1: you won" in transcript and "buffalo board 1: you lost" in transcript
    assert '"e7-e5": a buffalo moves only one square straight forward' in transcript
    assert '"e6-e5 dog:b3": an enclosed dog goes back to row 2' in transcript
    assert '"g2-g1": a dog never crosses a river' in transcript
    assert "played e6-e5 dog:a2" in transcript and "played f4xe5" in transcript
    assert "a buffalo crossed the river to row 1, at k1" in transcript
    assert "hunter22" not in sent and "secret1" not in sent
    check_golden(transcript, GOLDEN)
