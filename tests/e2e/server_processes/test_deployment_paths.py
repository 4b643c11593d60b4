"""The two ways a real MTA hands mail over (a Postfix pipe into `pbmserv mail`, SMTP to the
listener) give the same answers; two `serve` processes on one PostgreSQL database share the
work and process each message once."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import _engine_kind
from tests.e2e.processes import (
    environment,
    run_pbmserv,
    spool_messages,
    start_serve,
    wait_for_child,
)
from tests.support import Sink, free_port, make_mail, settle, smtp_send

pytestmark = pytest.mark.db


def as_postfix_pipes_it(message) -> bytes:  # type: ignore[no-untyped-def]
    """What Postfix's pipe(8) with flags=R writes on stdin: a Return-Path header in front."""
    return b"Return-Path: <alice@example.org>\n" + message.as_bytes().replace(b"\r\n", b"\n")


def body(message) -> str:  # type: ignore[no-untyped-def]
    return message.get_body(("plain",)).get_content()


def test_a_piped_message_is_answered_exactly_as_over_smtp(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, db_url: str, tmp_path: Path
) -> None:
    signup = make_mail("alice@example.org", "signup alice secret1")
    assert smtp_send(server.port, signup)[0] == 250
    settle(engine)
    bob = make_mail("bob@example.org", "signup bob hunter22")
    assert smtp_send(server.port, bob)[0] == 250
    settle(engine)
    lines = ("help chameleon", "games", "chameleon challenge -size=4 alice bob", "status alice")
    over_smtp = []
    for line in lines[:2]:
        before = len(sink.messages)
        assert smtp_send(server.port, make_mail("alice@example.org", line))[0] == 250
        settle(engine)
        over_smtp.extend(m.body.replace("\r\n", "\n").strip() for m in sink.messages[before:])
    # Only the piped process may answer now (a running listener would take the messages too).
    server.stop()
    env = environment(db_url, tmp_path / "spool", PBMSERV_ROBOTS="true")  # as the server's
    for line in lines:
        piped = as_postfix_pipes_it(make_mail("alice@example.org", line))
        result = run_pbmserv(["mail", "-f", "alice@example.org"], env, piped)
        assert result.returncode == 0, result.stderr
    spooled = spool_messages(tmp_path / "spool")  # in file-name order, not sending order
    replies = {m["Subject"]: body(m).strip() for m in spooled if m["In-Reply-To"]}
    assert [replies[f"Re: {line}"] for line in lines[:2]] == over_smtp
    # The challenge made board 1 and mailed both players; status then lists it.
    board_mail = {m["To"] for m in spooled if m["Subject"].startswith("chameleon board 1")}
    assert board_mail == {"alice@example.org", "bob@example.org"}
    assert "1 against bob: your move" in replies["Re: status alice"]


def test_two_servers_on_one_postgres_database_share_the_load(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    if _engine_kind() != "postgres":
        pytest.skip("several servers share a database only on PostgreSQL")
    ports = [free_port(), free_port()]
    spool = tmp_path / "spool"
    servers = []
    for i, port in enumerate(ports):
        env = environment(
            db_url,
            spool,
            PBMSERV_LISTEN=f"127.0.0.1:{port}",
            PBMSERV_POLL_SECONDS="0.2",
            PBMSERV_LOG_FORMAT="json",
        )
        servers.append(start_serve(env, port, tmp_path / f"serve{i}.log"))
    for i in range(2):  # both ready to play before the mail comes
        wait_for_child(tmp_path / f"serve{i}.log")
    sent = []
    try:
        for i in range(60):
            message = make_mail(f"user{i}@example.org", f"signup user{i} password{i}")
            assert smtp_send(ports[i % 2], message)[0] == 250
            sent.append(message["Message-ID"])
        settle(engine, timeout=120)
    finally:
        for proc in servers:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(20) == 0
    processed = []
    for i in range(2):
        lines = (tmp_path / f"serve{i}.log").read_text().splitlines()
        entries = [json.loads(line) for line in lines if line.startswith("{")]
        processed.append([e["inbox"] for e in entries if e["message"] == "processed"])
    assert processed[0] and processed[1], "one server did all the work"
    assert sorted(processed[0] + processed[1]) == sorted(set(processed[0] + processed[1]))
    assert len(processed[0]) + len(processed[1]) == 60
    replies = [m["In-Reply-To"] for m in spool_messages(spool)]
    assert sorted(replies) == sorted(sent)


def test_a_piped_reply_to_a_reply_address_is_the_players_move(  # type: ignore[no-untyped-def]
    engine, db_url: str, tmp_path: Path
) -> None:
    """Postfix with recipient_delimiter = + delivers pbmserv+TAG@host to the pipe, and its
    D flag adds Delivered-To: a reply with the move alone is played."""
    from sqlalchemy import select

    from pbmserv.db.models import MoveRow

    env = environment(db_url, tmp_path / "spool")

    def pipe(message) -> None:  # type: ignore[no-untyped-def]
        sender = str(message["From"])
        raw = b"Return-Path: <%s>\n" % sender.encode() + message.as_bytes().replace(b"\r\n", b"\n")
        result = run_pbmserv(["mail", "-f", sender], env, raw)
        assert result.returncode == 0, result.stderr

    pipe(make_mail("alice@example.org", "signup alice secret1"))
    pipe(make_mail("bob@example.org", "signup bob hunter22"))
    pipe(make_mail("alice@example.org", "chameleon challenge -size=4 alice bob"))
    [board_mail] = [
        m
        for m in spool_messages(tmp_path / "spool")
        if m["To"] == "alice@example.org" and m["Reply-To"]
    ]
    address = board_mail["Reply-To"].addresses[0].addr_spec
    reply = make_mail("alice@example.org", f"Re: {board_mail['Subject']}", "b2x\n\nAlice\n")
    reply.replace_header("To", "Chameleon server <pbmserv@localhost>")  # a forward, say
    reply["Delivered-To"] = address
    pipe(reply)
    with engine.connect() as conn:
        assert list(conn.scalars(select(MoveRow.text))) == ["b2x"]
