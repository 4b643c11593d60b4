"""Real SMTP in and out: the running listener, a capturing relay, a real database."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from pbmserv.db.models import InboxMessage, MoveRow, OutboxMessage
from tests.support import PEOPLE, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE = "Alice <alice@example.org>"
BOB = "bob@example.org"


def send(server, engine, sink: Sink, sender: str, subject: str, body: str = "", **kw):  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    message = make_mail(sender, subject, body, **kw)
    code, _ = smtp_send(server.port, message)
    assert code == 250
    settle(engine)
    return message, sink.messages[before:]


def test_reply_headers_and_stored_before_250(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    message = make_mail(ALICE, "signup alice secret1 Alice")
    code, text = smtp_send(server.port, message)
    assert code == 250
    with engine.connect() as conn:  # the 250 came only after the row was committed
        assert conn.scalar(select(func.count()).select_from(InboxMessage)) == 1
    settle(engine)
    [reply] = sink.wait_count(1)
    assert reply.to == "alice@example.org"
    headers = reply.message
    assert headers["In-Reply-To"] == message["Message-ID"]
    assert message["Message-ID"] in headers["References"]
    assert headers["Auto-Submitted"] == "auto-replied"
    assert headers["X-Loop"] == "pbmserv@localhost"
    assert headers["Message-ID"] and headers["Date"]
    assert headers["Subject"] == "Re: signup alice ******** Alice"  # password masked
    assert "Welcome, alice!" in reply.body and "secret1" not in reply.body


def test_duplicate_message_is_answered_once(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    message = make_mail(ALICE, "signup alice secret1")
    assert smtp_send(server.port, message)[0] == 250
    code, text = smtp_send(server.port, message)
    assert code == 250 and b"already" in text
    settle(engine)
    time.sleep(0.3)
    assert len(sink.messages) == 1


def test_oversized_message_gets_552_and_is_not_stored(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    message = make_mail(ALICE, "signup alice secret1", ("x" * 70 + "\n") * 1500)
    code, _ = smtp_send(server.port, message)
    assert code == 552
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(InboxMessage)) == 0


@pytest.mark.parametrize(
    "sender, headers, mail_from",
    [
        ("MAILER-DAEMON@example.org", {}, None),
        ("postmaster@example.org", {}, None),
        (ALICE, {"Auto-Submitted": "auto-replied"}, None),
        (ALICE, {"Precedence": "bulk"}, None),
        (ALICE, {"X-Loop": "pbmserv@localhost"}, None),
        (ALICE, {}, ""),  # a null return path: a bounce
    ],
)
def test_bounces_and_auto_replies_are_never_answered(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, sender, headers, mail_from
) -> None:
    message = make_mail(sender, "signup alice secret1", headers=headers)
    assert smtp_send(server.port, message, mail_from=mail_from)[0] == 250
    settle(engine)
    time.sleep(0.3)
    assert sink.messages == []
    with engine.connect() as conn:
        assert conn.scalar(select(InboxMessage.status)) == "ignored"
        assert conn.scalar(select(func.count()).where(PEOPLE)) == 0


def test_body_commands_in_a_reply_get_one_combined_answer(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    body = (
        "signup alice secret1 Alice\n\n"
        "help commands\n"
        "bogus command\n"
        "-- \n"
        "Alice, sent from her garden\n"
    )
    _, out = send(server, engine, sink, ALICE, "Re: chameleon board 3: your move", body)
    [reply] = out
    text = reply.body
    assert "> signup alice ******** Alice" in text
    assert "> help commands" in text and "GAME move BOARD USERID PASSWORD MOVE" in text
    # A line that is no command is left out silently when there are commands.
    assert "bogus" not in text and "is not one we know" not in text
    assert "garden" not in text
    # With no command at all, the answer says what it saw, without quoting it (a line that
    # is no command may hold a password).
    body = "bogus Zq8secret\nCheers\n> help\n"
    _, out = send(server, engine, sink, ALICE, "Re: chameleon board 3", body)
    assert "I read 2 lines of your own text, and none starts with a command" in out[0].body
    assert "Zq8secret" not in out[0].body


def test_quoted_text_and_html_only_mail(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    body = "signup alice secret1\n\nOn Monday, pbmserv wrote:\n> chameleon move 1 x y z\n"
    _, out = send(server, engine, sink, ALICE, "", body)
    assert "Welcome, alice" in out[0].body and "> chameleon move" not in out[0].body
    html = make_mail(BOB, "")
    html.set_content(
        "<html><body><p>signup&nbsp;bob hunter22</p><div>-- </div></body></html>", subtype="html"
    )
    assert smtp_send(server.port, html)[0] == 250
    settle(engine)
    assert "Welcome, bob" in sink.messages[-1].body


def test_broken_mime_never_crashes_and_mail_after_it_is_processed(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink
) -> None:
    broken = (
        b"From: alice@example.org\r\nSubject: =?utf-8?B?!!!notbase64?=\r\n"
        b"Message-ID: <broken@test>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="zzz"\r\n\r\n'
        b"--zzz\r\nContent-Type: text/plain; charset=x-nonsense\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\n%%%not base64%%%\r\n"
    )
    assert smtp_send(server.port, broken, mail_from="alice@example.org")[0] == 250
    _, out = send(server, engine, sink, BOB, "signup bob hunter22")
    assert any("Welcome, bob" in m.body for m in sink.messages)
    with engine.connect() as conn:
        statuses = sorted(conn.scalars(select(InboxMessage.status)))
    assert statuses == ["done", "done"]
    # Mail goes out over several relay connections at once: found by recipient, not order.
    to_alice = [m for m in sink.messages if m.to == "alice@example.org"]
    assert len(to_alice) == 1 and "Sorry" in to_alice[0].body


def test_relay_down_delays_mail_and_never_drops_it(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    sink.handler.refuse_with = "421 4.3.2 Service not available"
    assert smtp_send(server.port, make_mail(ALICE, "signup alice secret1"))[0] == 250
    deadline = time.monotonic() + 10
    attempts = 0
    while time.monotonic() < deadline and attempts < 2:
        with engine.connect() as conn:
            attempts = conn.scalar(select(OutboxMessage.attempts)) or 0
        time.sleep(0.05)
    assert attempts >= 2 and sink.messages == []
    with engine.connect() as conn:
        row = conn.execute(select(OutboxMessage.status, OutboxMessage.last_error)).one()
    assert row.status == "pending" and "421" in row.last_error
    sink.handler.refuse_with = None
    [reply] = sink.wait_count(1)
    assert "Welcome, alice" in reply.body
    settle(engine)


def test_a_move_mails_the_board_to_both_players_and_observers(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink
) -> None:
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    send(server, engine, sink, "carol@example.org", "signup carol pass3333")
    _, out = send(server, engine, sink, ALICE, "chameleon challenge -size=7 alice bob")
    assert sorted(m.to for m in out) == [
        "alice@example.org",
        "alice@example.org",
        "bob@example.org",
    ]
    send(server, engine, sink, "carol@example.org", "chameleon observe 1 carol pass3333")
    _, out = send(server, engine, sink, ALICE, "chameleon move 1 alice secret1 d4x")
    by_to = {}
    for m in out:
        by_to.setdefault(m.to, []).append(m)
    assert len(by_to["alice@example.org"]) == 2  # the reply and the board
    board_mail = next(m for m in by_to["bob@example.org"])
    assert board_mail.subject == "chameleon board 1"  # one Subject for the board's thread
    assert board_mail.body.splitlines()[0] == "chameleon board 1: your move"
    assert "chameleon move 1 bob PASSWORD MOVE" in board_mail.body
    assert "last move: d4x" in board_mail.body
    assert board_mail.message["Auto-Submitted"] == "auto-generated"
    [carol] = by_to["carol@example.org"]
    assert carol.subject == "chameleon board 1"
    assert carol.body.splitlines()[0] == "chameleon board 1: bob to move"
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(MoveRow)) == 1


def test_rate_limit_defers_a_flooding_sender_with_451(with_settings, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    from tests.support import RunningServer

    running = RunningServer(with_settings(rate_limit_per_hour=3)).start()
    try:
        codes = [
            smtp_send(running.port, make_mail(ALICE, f"help {i}"), mail_from="alice@example.org")[0]
            for i in range(5)
        ]
        other = smtp_send(running.port, make_mail(BOB, "help"))[0]
    finally:
        running.stop()
    assert codes == [250, 250, 250, 451, 451] and other == 250
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(InboxMessage)) == 4


def test_a_crashing_command_is_kept_answered_once_and_the_server_goes_on(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, monkeypatch
) -> None:
    import pbmserv.runtime.handling as handling

    real = handling.dispatch_line

    def explode(ctx, line):  # type: ignore[no-untyped-def]
        if "explode" in line:
            raise RuntimeError("a bug in a command")
        return real(ctx, line)

    monkeypatch.setattr(handling, "dispatch_line", explode)
    send(server, engine, sink, ALICE, "help explode")
    send(server, engine, sink, BOB, "signup bob hunter22")
    with engine.connect() as conn:
        rows = conn.execute(
            select(InboxMessage.status, InboxMessage.attempts, InboxMessage.error).order_by(
                InboxMessage.id
            )
        ).all()
    assert rows[0].status == "failed" and rows[0].attempts == 3
    assert "a bug in a command" in rows[0].error
    assert rows[1].status == "done"
    sink.wait_for(lambda m: any(r.to == "alice@example.org" for r in m))  # queued just after
    settle(engine)
    apologies = [m for m in sink.messages if m.to == "alice@example.org"]
    assert len(apologies) == 1 and "internal error" in apologies[0].body
    # The failing message waits between its tries, so bob may be answered before it ends.
    [welcome] = [m for m in sink.messages if m.to == "bob@example.org"]
    assert "Welcome, bob" in welcome.body


def test_replies_are_plain_7bit_and_non_ascii_survives_the_round_trip(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink
) -> None:
    _, [plain] = send(server, engine, sink, BOB, "signup bob hunter22")
    assert plain.message["Content-Transfer-Encoding"] == "7bit"
    _, [reply] = send(server, engine, sink, ALICE, "signup zoe secret1 Zoë Ångström")
    assert reply.message["Content-Transfer-Encoding"] == "quoted-printable"
    assert "signed up as Zoë Ångström" in reply.body
    assert reply.subject == "Re: signup zoe ******** Zoë Ångström"
