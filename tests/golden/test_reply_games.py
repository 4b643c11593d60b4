"""Two whole games played only by replying to board mail, checked against a golden transcript.

After the challenge, every move is a reply to the player's latest board mail, to its Reply-To
address, with no password, written as mail programs write replies: top-posted above the quote,
bottom-posted below it, inline between quoted lines, HTML-only (as a phone sends it), and
format=flowed, with greetings and sign-offs around the move. Each mail goes through the real
SMTP listener; every answer comes back through a real relay.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest

from tests.golden.runner import check_golden, describe
from tests.support import Received, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("reply_games.txt")
ALICE, BOB = "alice@example.org", "bob@example.org"

#: (who replies, how the reply is written, what they write)
Reply = tuple[str, str, str]

CHAMELEON: list[Reply] = [
    (ALICE, "bottom", "c1x\n\nGood luck!\nAlice"),
    (BOB, "inline", "swap"),
    (ALICE, "html", "a4o"),
    (BOB, "flowed", "c2x"),
    (ALICE, "top", "a4o"),  # taken now: the error says so, and nothing changes
    (ALICE, "top", "b4o\nchat you swapped my corner; fair enough"),
    (BOB, "bottom", "c3x"),
    (ALICE, "inline", "c4o"),
    (BOB, "top", "d3x"),
    (ALICE, "html", "d4o"),
    (BOB, "top", "e3x"),
    (ALICE, "bottom", "e4o\n\nThat should do it.\n-- \nAlice"),
    (BOB, "top", "a1x"),  # the board is over: its reply address takes nothing more
]

EXTINCTION: list[Reply] = [
    (ALICE, "top", "e4"),
    (BOB, "flowed", "e5"),
    (ALICE, "inline", "Qh5"),
    (BOB, "html", "Qh4\nchat bold, I know"),
    (ALICE, "bottom", "Qxh4"),  # Black has no queen left: White wins
]


def _quoted(mail: Received) -> list[str]:
    return [f"> {line}".rstrip() for line in mail.body.splitlines()[:12]]


def reply_to(mail: Received, sender: str, style: str, text: str) -> EmailMessage:
    """A reply to ``mail`` as a mail program writes it in ``style``."""
    intro = "On Wed, 25 Nov 2026 at 09:00, pbmserv <pbmserv@localhost> wrote:"
    quote = _quoted(mail)
    to = mail.message["Reply-To"].addresses[0].addr_spec
    subject = f"Re: {mail.subject}"
    if style == "top":
        body = f"{text}\n\n{intro}\n" + "\n".join(quote)
    elif style == "bottom":
        body = f"{intro}\n" + "\n".join(quote) + f"\n\n{text}\n"
    elif style == "inline":
        body = f"{intro}\n" + "\n".join(quote[:4]) + f"\n\n{text}\n\n" + "\n".join(quote[4:])
    elif style == "flowed":
        body = f"{text}\n\n{intro}\n" + "\n".join(quote)
    else:
        body = ""
    message = make_mail(sender, subject, body, to=to)
    if style == "html":
        lines = "".join(f"<div>{line}</div>" for line in text.splitlines())
        quoted = "<br>".join(line[2:] for line in quote)
        message.set_content(
            f'<html><body>{lines}<br><div class="gmail_quote"><div>{intro}</div>'
            f"<blockquote>{quoted}</blockquote></div></body></html>",
            subtype="html",
        )
    if style == "flowed":
        message.set_param("format", "flowed")
    message.replace_header("Message-ID", make_msgid(domain="client.example"))
    message["In-Reply-To"] = mail.message["Message-ID"]
    return message


def latest_board_mail(sink: Sink, to: str) -> Received:
    """The newest mail to ``to`` with its seat's reply address (a chat line's notice has its
    own, whose replies are chat lines back)."""
    seats = [m for m in sink.messages if m.to == to and m.message["Reply-To"]]
    return [m for m in seats if "+b" in m.message["Reply-To"].addresses[0].addr_spec][-1]


def play(server, engine, sink: Sink, sender: str, message: EmailMessage, label: str) -> str:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    to = message["To"]
    assert smtp_send(server.port, message, to=to)[0] == 250
    settle(engine)
    out = sorted(sink.messages[before:], key=lambda m: (m.to, m.subject, m.body))
    assert out, f"no answer to {label}"
    return "\n".join([f"=== {sender}: {label}\n", *(describe(m) for m in out)])


def test_two_games_played_only_by_replying(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    parts = []
    for sender, command in [
        (ALICE, "signup alice secret1 Alice Liddell"),
        (BOB, "signup bob hunter22 Bob"),
        (ALICE, "chameleon challenge -size=5 alice bob"),
    ]:
        parts.append(play(server, engine, sink, sender, make_mail(sender, command), command))
    for game, replies in (("chameleon", CHAMELEON), ("extinction", EXTINCTION)):
        if game == "extinction":
            command = "extinction challenge alice bob"
            parts.append(play(server, engine, sink, ALICE, make_mail(ALICE, command), command))
        for sender, style, text in replies:
            mail = latest_board_mail(sink, sender)
            label = f"a {style} reply to {mail.subject!r}: " + " / ".join(text.splitlines())
            message = reply_to(mail, sender, style, text)
            parts.append(play(server, engine, sink, sender, message, label))
    transcript = "\n".join(parts)
    check_golden(transcript, GOLDEN)
    # Facts checked directly, whatever the golden file says: in what the server sent.
    transcript = "\n".join(part.split("\n", 1)[1] for part in parts)
    assert transcript.count("board 1: you won") == 1 and "board 2: you won" in transcript
    assert "Qxh4" in transcript and "alice (White) won" in transcript
    assert transcript.count("Sorry") == 1  # the taken point a4: one error, nothing else
    assert "a4 is already taken" in transcript
    assert "chameleon board 1 is over, so its reply address takes no more moves" in transcript
    assert "swapped my corner" in transcript and "bold, I know" in transcript
    assert "Good luck" not in transcript and "should do it" not in transcript
    assert "secret1" not in transcript and "hunter22" not in transcript
