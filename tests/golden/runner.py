"""Shared driver of the golden mail transcripts: send each step through the real SMTP listener,
collect every reply and board mail from the real relay, and compare with the stored text.

Regenerate a transcript with PBMSERV_UPDATE_GOLDEN=1 after a deliberate change, and read the
diff.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tests.support import Received, Sink, make_mail, settle, smtp_send

#: (sender address, subject, body) of one mail a player sends.
Step = tuple[str, str, str]


def describe(message: Received) -> str:
    headers = message.message
    kind = "reply" if headers["Auto-Submitted"] == "auto-replied" else "board/notice"
    body = "\n".join(line.rstrip() for line in message.body.rstrip().splitlines())
    return f"<<< to {message.to} ({kind})\nSubject: {message.subject}\n\n{body}\n"


def play_transcript(
    server, engine, sink: Sink, steps: Sequence[Step]
) -> tuple[str, list[Received]]:  # type: ignore[no-untyped-def]
    """The transcript, and every message the server sent (for checks on output alone)."""
    parts = []
    sent: list[Received] = []
    for sender, subject, body in steps:
        before = len(sink.messages)
        assert smtp_send(server.port, make_mail(sender, subject, body))[0] == 250
        settle(engine)
        out = sorted(sink.messages[before:], key=lambda m: (m.to, m.subject, m.body))
        assert out, f"no answer to {subject!r}"
        quoted = "".join(f"    {line}\n" for line in body.splitlines())
        parts.append(f"=== {sender}: {subject}\n{quoted}")
        parts.extend(describe(m) for m in out)
        sent.extend(out)
    return "\n".join(parts), sent


def check_golden(transcript: str, golden: Path) -> None:
    if os.environ.get("PBMSERV_UPDATE_GOLDEN"):
        golden.write_text(transcript)
    assert golden.exists(), "run once with PBMSERV_UPDATE_GOLDEN=1 to create the transcript"
    assert transcript == golden.read_text()
