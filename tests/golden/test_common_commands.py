"""pbmserv's common commands by mail, checked against a golden transcript: chat, show#N,
preview, submit/confirm, a queued answer, proposals (undo and draw, accepted and rejected),
ratings, message, the board lists and views, and closing an account.

Every message goes through the real SMTP listener; every reply and board mail comes back
through a real relay (see tests/golden/runner.py). Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.runner import check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("common_commands.txt")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"

STEPS: list[tuple[str, str, str]] = [
    (ALICE, "signup alice secret1 Alice", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (CAROL, "signup carol pass3333 Carol", ""),
    (ALICE, "extinction challenge alice bob", ""),
    (CAROL, "extinction observe 1 carol pass3333", ""),
    (ALICE, "extinction chat 1 alice secret1 Good luck!", ""),
    (ALICE, "extinction preview 1 alice secret1 e4", ""),
    (ALICE, "extinction submit 1 alice secret1 e4", ""),
    (ALICE, "extinction confirm 1 alice secret1", ""),
    (BOB, "extinction move 1 bob hunter22 e5#1", ""),
    (BOB, "extinction move 1 bob hunter22 e5#1", ""),  # the same mail again: a no-op
    (BOB, "extinction queue 1 bob hunter22 Nf3 Nc6", ""),
    (ALICE, "extinction move 1 alice secret1 Nf3", ""),  # Nc6 answers at once
    (ALICE, "extinction show 1#1", ""),
    (ALICE, "extinction propose 1 alice secret1 undo", ""),
    (BOB, "extinction accept 1 bob hunter22", ""),  # Nf3 and Nc6 taken back
    (ALICE, "extinction move 1 alice secret1 Bc4", ""),
    (BOB, "extinction propose 1 bob hunter22 draw", ""),
    (ALICE, "extinction reject 1 alice secret1", ""),
    (BOB, "extinction draw 1 bob hunter22", ""),
    (ALICE, "extinction accept 1 alice secret1 draw", ""),
    (CAROL, "chameleon challenge -size=3 carol alice", ""),
    (ALICE, "chameleon accept 2 alice secret1", ""),
    (CAROL, "list", ""),
    (CAROL, "chameleon resign 2 carol pass3333", ""),
    (BOB, "extinction ratings", ""),
    (BOB, "chameleon standings", ""),
    (BOB, "ratings alice", ""),
    (CAROL, "message carol pass3333 alice bob Thanks for the games!", ""),
    (CAROL, "extinction games alice all", ""),
    (ALICE, "chameleon showas alice secret1 all", ""),
    (CAROL, "delete carol pass3333", ""),
]


def test_common_commands_by_mail_match_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    sent = "\n".join(describe(m) for m in messages)
    # Facts checked directly, whatever the golden file says.
    for secret in ("secret1", "hunter22", "pass3333"):
        assert secret not in sent
    assert "bob (Black) played Nc6 (queued in advance)." in transcript
    assert "the move was written for move 1 of board 1, but the next is move 2" in transcript
    assert "By agreement, alice (White) took back 2. Nf3, 2... Nc6." in transcript
    assert "Draw agreed: alice (White) accepted bob (Black)'s proposal." in transcript
    assert "alice says, on extinction board 1:" in transcript
    assert "The account carol is closed" in transcript
    check_golden(transcript, GOLDEN)
