"""Password guessing by mail is cut short: failed logins are limited per user id and per
sender, the owner is told once, the owner whose From the receiving MTA authenticated is never
locked out (a forged owner From gets no more guesses than a stranger, and no answer at all when
DMARC failed), and an unknown user id gets the same answer as a wrong password. Real SMTP in
and out, a real database."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from pbmserv.db.models import AuthFailure
from tests.support import RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

WRONG = "the user id or password is wrong"
PAUSED = "too many wrong passwords lately"


@pytest.fixture
def guarded(settings, sink: Sink):  # type: ignore[no-untyped-def]
    limited = replace(
        settings,
        failed_logins_per_user=3,
        failed_logins_per_sender=5,
        trusted_authserv_ids="mx.example.org",
    )
    running = RunningServer(limited).start()
    yield running
    running.stop()


#: What the receiving MTA writes on top of a message whose From domain passed DMARC.
DMARC_PASS = {"Authentication-Results": "mx.example.org; dmarc=pass header.from=example.org"}


def ask(server, engine, sink: Sink, sender: str, *lines: str, headers=None) -> str:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    mail = make_mail(sender, "", "\n".join(lines) + "\n", headers=headers)
    assert smtp_send(server.port, mail)[0] == 250
    settle(engine)
    replies = [m for m in sink.messages[before:] if m.to == sender]
    assert len(replies) == 1
    return replies[0].body


def authenticated_owner_changes_password(server, engine, sink: Sink) -> str:  # type: ignore[no-untyped-def]
    """alice, writing with her MTA's DMARC pass on top, changes her password; the answer."""
    line = "password alice pw-alice1 pw-alice2"
    return ask(server, engine, sink, "alice@example.org", line, headers=DMARC_PASS)


def signup(server, engine, sink: Sink, who: str) -> None:  # type: ignore[no-untyped-def]
    assert "Welcome" in ask(server, engine, sink, f"{who}@example.org", f"signup {who} pw-{who}1")


def test_unknown_user_and_wrong_password_read_the_same(guarded, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    signup(guarded, engine, sink, "alice")
    wrong = ask(guarded, engine, sink, "eve@example.org", "password alice nope nope2")
    unknown = ask(guarded, engine, sink, "eve@example.org", "password nobody nope nope2")
    assert WRONG in wrong and WRONG in unknown
    assert wrong.replace("alice", "X") == unknown.replace("nobody", "X")


def test_guessing_one_user_is_paused_and_the_owner_told_once(guarded, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    signup(guarded, engine, sink, "alice")
    guesses = [f"password alice guess{k} new{k}xyz" for k in range(6)]
    # Two guessers from different addresses: the per-user limit (3) counts them together.
    first = ask(guarded, engine, sink, "eve@example.org", *guesses[:2])
    assert first.count(WRONG) == 2
    second = ask(guarded, engine, sink, "mallory@example.org", *guesses[2:])
    assert second.count(WRONG) == 1 and second.count(PAUSED) == 3
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(AuthFailure)) == 3
    alerts = [m for m in sink.messages if "guessing your password" in m.subject]
    assert [m.to for m in alerts] == ["alice@example.org"]
    assert "guess0" not in alerts[0].body  # no guessed password is quoted to anyone
    # More guessing does not mail the owner again.
    ask(guarded, engine, sink, "trent@example.org", *guesses[:3])
    assert len([m for m in sink.messages if "guessing your password" in m.subject]) == 1
    # The owner's From alone proves nothing: it is paused like anyone else.
    assert PAUSED in ask(
        guarded, engine, sink, "alice@example.org", "password alice pw-alice1 pw-alice2"
    )
    # The owner whose From the receiving MTA authenticated is not locked out.
    assert "changed" in authenticated_owner_changes_password(guarded, engine, sink)


def test_one_sender_guessing_many_users_is_paused(guarded, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    for who in ("ann", "bob", "cid"):
        signup(guarded, engine, sink, who)
    lines = [
        f"password {who} guess{k} newpass{k}" for k in range(2) for who in ("ann", "bob", "cid")
    ]
    body = ask(guarded, engine, sink, "eve@example.org", *lines)
    assert body.count(WRONG) == 5 and body.count(PAUSED) == 1
    # Another sender is not held up by eve's guessing.
    assert "changed" in ask(
        guarded, engine, sink, "bob@example.org", "password bob pw-bob1 pw-bob22"
    )


def test_a_forged_owner_gets_no_more_guesses_and_no_oracle(guarded, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    for who in ("alice", "mallory"):
        signup(guarded, engine, sink, who)
    # mallory writes in alice's name (own envelope, alice's From), asking the server to tell
    # mallory which guess was right.
    guesses = [f"message alice guess{k} mallory HIT{k}" for k in range(8)]
    before = len(sink.messages)
    forged = make_mail("alice@example.org", "", "\n".join(guesses) + "\n")
    assert smtp_send(guarded.port, forged, mail_from="mallory@evil.example")[0] == 250
    settle(engine)
    with engine.connect() as conn:
        tried = conn.scalar(select(func.count()).select_from(AuthFailure))
    assert tried == 3  # the stranger's limit, not more
    # The real owner, authenticated, still logs in and is heard.
    assert "changed" in authenticated_owner_changes_password(guarded, engine, sink)
    # Where the MTA found DMARC failing, the forged mail is not answered at all: its result
    # could reach nobody but the victim, and a right guess would mail mallory.
    before = len(sink.messages)
    failing = {"Authentication-Results": "mx.example.org; dmarc=fail header.from=example.org"}
    forged = make_mail("alice@example.org", "", "message alice pw-alice2 mallory HIT\n",
                       headers=failing)  # fmt: skip
    assert smtp_send(guarded.port, forged, mail_from="mallory@evil.example")[0] == 250
    settle(engine)
    assert sink.messages[before:] == []
