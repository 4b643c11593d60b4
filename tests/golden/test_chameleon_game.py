"""A whole Chameleon game by mail, from signup to the win, checked against a golden transcript.

Every message goes through the real SMTP listener; every reply and board mail comes back
through a real relay (see tests/golden/runner.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.runner import check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("chameleon_game.txt")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"

STEPS: list[tuple[str, str, str]] = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (CAROL, "signup carol pass3333", ""),
    (ALICE, "help chameleon", ""),
    (ALICE, "chameleon challenge -size=5 alice bob", ""),
    (CAROL, "chameleon observe 1 carol pass3333", ""),
    (BOB, "chameleon move 1 bob hunter22 c3x", ""),
    (ALICE, "chameleon move 1 alice secret1 c1x", ""),
    (BOB, "chameleon move 1 bob WRONG swap", ""),
    (
        BOB,
        "Re: chameleon board 1: your move",
        "chameleon swap 1 bob hunter22\n\nOn Sunday pbmserv wrote:\n> Chameleon, board 1\n",
    ),
    (ALICE, "chameleon move 1 alice secret1 a4o", ""),
    (BOB, "chameleon move 1 bob hunter22 c2x", ""),
    (ALICE, "chameleon move 1 alice secret1 a4o", ""),
    (ALICE, "chameleon move 1 alice secret1 b4o", ""),
    (BOB, "chameleon move 1 bob hunter22 c3x", ""),
    (ALICE, "chameleon move 1 alice secret1 c4o", ""),
    (BOB, "chameleon move 1 bob hunter22 d3x", ""),
    (ALICE, "chameleon move 1 alice secret1 d4o", ""),
    (BOB, "chameleon move 1 bob hunter22 e3x", ""),
    (ALICE, "chameleon move 1 alice secret1 e4o", ""),
    (BOB, "chameleon move 1 bob hunter22 a1x", ""),
    (CAROL, "chameleon history 1", ""),
    (BOB, "status bob", ""),
]


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    sent = "\n".join(describe(m) for m in messages)
    # Facts checked directly, whatever the golden file says.
    assert "chameleon board 1: you won" in transcript
    assert "chameleon board 1: you lost" in transcript
    assert "WRONG" not in sent and "hunter22" not in sent and "secret1" not in sent
    check_golden(transcript, GOLDEN)
