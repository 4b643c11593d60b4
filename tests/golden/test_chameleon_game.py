"""A whole Chameleon game by mail, from signup to the win, checked against a golden transcript.

Every message goes through the real SMTP listener; every reply and board mail comes back
through a real relay. Regenerate the transcript with PBMSERV_UPDATE_GOLDEN=1 after a deliberate
change, and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import Received, Sink, make_mail, settle, smtp_send

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


def _describe(message: Received) -> str:
    headers = message.message
    kind = "reply" if headers["In-Reply-To"] else "board/notice"
    body = "\n".join(line.rstrip() for line in message.body.rstrip().splitlines())
    return f"<<< to {message.to} ({kind})\nSubject: {message.subject}\n\n{body}\n"


def play_transcript(server, engine, sink: Sink) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The transcript, and everything the server sent (for checks on output alone)."""
    parts = []
    sent = []
    for sender, subject, body in STEPS:
        before = len(sink.messages)
        assert smtp_send(server.port, make_mail(sender, subject, body))[0] == 250
        settle(engine)
        out = sorted(sink.messages[before:], key=lambda m: (m.to, m.subject, m.body))
        assert out, f"no answer to {subject!r}"
        quoted = "".join(f"    {line}\n" for line in body.splitlines())
        parts.append(f"=== {sender}: {subject}\n{quoted}")
        parts.extend(_describe(m) for m in out)
        sent.extend(_describe(m) for m in out)
    return "\n".join(parts), "\n".join(sent)


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    transcript, sent = play_transcript(server, engine, sink)
    # Facts checked directly, whatever the golden file says.
    assert "chameleon board 1: you won" in transcript
    assert "chameleon board 1: you lost" in transcript
    assert "WRONG" not in sent and "hunter22" not in sent and "secret1" not in sent
    if os.environ.get("PBMSERV_UPDATE_GOLDEN"):
        GOLDEN.write_text(transcript)
    assert GOLDEN.exists(), "run once with PBMSERV_UPDATE_GOLDEN=1 to create the transcript"
    assert transcript == GOLDEN.read_text()
