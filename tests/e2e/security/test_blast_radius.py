"""One incoming message has a bounded blast radius: the mails it may cause, the users a
``message`` may name, the observers of a board, and the mails a day one address gets with other
users' text. What is over gets a clear answer to the sender and nothing to the others. Real
SMTP in and out, a real database."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support import Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db


@pytest.fixture
def capped(settings, sink: Sink):  # type: ignore[no-untyped-def]
    limits = replace(settings, text_mails_per_recipient_per_day=3)
    running = RunningServer(limits).start()
    yield running
    running.stop()


def send(server, engine, sink: Sink, sender: str, *lines: str) -> list[Received]:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(sender, "", "\n".join(lines) + "\n"))[0] == 250
    settle(engine)
    return sink.messages[before:]


def reply_to(out: list[Received], sender: str) -> str:
    [reply] = [m for m in out if m.to == sender and m.subject.startswith("Re:")]
    return reply.body


def sign_up(server, engine, sink: Sink, *names: str) -> None:  # type: ignore[no-untyped-def]
    for name in names:
        send(server, engine, sink, f"{name}@example.org", f"signup {name} pw-{name}1")


def test_a_message_names_at_most_ten_users(capped, engine, sink) -> None:  # type: ignore[no-untyped-def]
    names = [f"u{n:02d}" for n in range(11)]
    sign_up(capped, engine, sink, "mallory", *names)
    out = send(capped, engine, sink, "mallory@example.org", f"message mallory pw-mallory1 "
               f"{' '.join(names)} Cheap pills")  # fmt: skip
    assert [m.to for m in out] == ["mallory@example.org"]
    assert "at most 10 users, and this one names 11" in reply_to(out, "mallory@example.org")
    out = send(capped, engine, sink, "mallory@example.org",
               f"message mallory pw-mallory1 {' '.join(names[:10])} hello")  # fmt: skip
    assert len(out) == 11


def test_a_board_has_at_most_ten_observers(capped, engine, sink) -> None:  # type: ignore[no-untyped-def]
    watchers = [f"w{n:02d}" for n in range(11)]
    sign_up(capped, engine, sink, "alice", "bob", *watchers)
    send(capped, engine, sink, "alice@example.org", "chameleon challenge alice bob")
    for name in watchers[:10]:
        send(capped, engine, sink, f"{name}@example.org", f"chameleon observe 1 {name} pw-{name}1")
    out = send(capped, engine, sink, "w10@example.org", "chameleon observe 1 w10 pw-w101")
    assert "has 10 observers, the most a board may have" in reply_to(out, "w10@example.org")

    # Each chat reaches bob and the ten observers: two fit in one message's 25 mails, the
    # third is refused whole, and so is what comes after it.
    out = send(capped, engine, sink, "alice@example.org",
               *[f"chameleon chat 1 alice pw-alice1 hello {n}" for n in range(4)])  # fmt: skip
    body = reply_to(out, "alice@example.org")
    assert len(out) == 1 + 2 * 11
    assert body.count("more than 25 mails to other people") == 2
    assert "hello 2" not in " ".join(m.body for m in out if m.to != "alice@example.org")


def test_one_address_gets_a_few_mails_a_day_of_other_users_text(capped, engine, sink) -> None:  # type: ignore[no-untyped-def]
    sign_up(capped, engine, sink, "mallory", "trent", "bob", "alice")
    # A challenge is someone else's doing: it counts as one of bob's three today.
    send(capped, engine, sink, "alice@example.org", "owlman challenge alice bob")
    lines = [f"message mallory pw-mallory1 bob buy now {n}" for n in range(3)]
    out = send(capped, engine, sink, "mallory@example.org", *lines)
    assert [m.to for m in out].count("bob@example.org") == 2
    assert "has had 3 mails" in reply_to(out, "mallory@example.org")
    out = send(capped, engine, sink, "trent@example.org", "message trent pw-trent1 bob hi")
    assert [m.to for m in out] == ["trent@example.org"]
    assert "has had 3 mails from other players today" in reply_to(out, "trent@example.org")
    # Nor may a challenge reach him today; a chat skips the reader who had enough.
    out = send(capped, engine, sink, "trent@example.org", "buffalo challenge trent bob")
    assert [m.to for m in out] == ["trent@example.org"]
    out = send(capped, engine, sink, "alice@example.org", "owlman chat 1 alice pw-alice1 hi")
    assert [m.to for m in out] == ["alice@example.org"]
    assert "not mailed to 1 reader" in reply_to(out, "alice@example.org")
    # Moves are not other users' text: bob's board mail still comes.
    out = send(capped, engine, sink, "bob@example.org", "owlman board 1 bob pw-bob1")
    assert any(m.to == "bob@example.org" for m in out)
