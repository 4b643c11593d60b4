"""A whole Rebel Buffalo game by mail, from signup to Black's win, checked against a golden
transcript (see tests/golden/runner.py): a dog enclosed and sent home with dog:, a move refused
at the river, the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.runner import Step, check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("buffalo_game.txt")
ALICE, BOB = "alice@example.org", "bob@example.org"


def _moves() -> list[Step]:
    black = ["c7-c6", "c6-c5", "e7-e6", "e6-e5 dog:a2", "k7-k6", "k5", "k4", "k3", "k2", "k1"]
    white = ["d2-d5", "e2-e3", "e3-e2", "g2-g3", "g3-g2", "g2-g3", "g3-g2", "g2-g3", "g3-g2"]
    steps: list[Step] = []
    for turn, move in enumerate(black):
        steps.append((ALICE, f"buffalo move 1 alice secret1 {move}", ""))
        if turn == 3:
            steps.append((BOB, "buffalo move 1 bob hunter22 g2-g1", ""))  # across the river
        if turn < len(white):
            steps.append((BOB, f"buffalo move 1 bob hunter22 {white[turn]}", ""))
    return steps


STEPS: list[Step] = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (ALICE, "help buffalo", ""),
    (ALICE, "buffalo challenge -variant=rebel alice bob", ""),
    *_moves(),
    (BOB, "buffalo history 1", ""),
]


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    sent = "\n".join(describe(m) for m in messages)
    assert "buffalo board 1: you won" in transcript and "buffalo board 1: you lost" in transcript
    assert "never crosses a river" in transcript
    assert "e6-e5 dog:a2" in transcript and "a buffalo crossed the river to row 1" in transcript
    assert "hunter22" not in sent and "secret1" not in sent
    check_golden(transcript, GOLDEN)
