"""The operator's shell over the queues and addresses (issue 47): whole error texts, held
messages, listings that say when they stop short or match nothing, a result column, and an
address confirmed by hand. Each command is a real `pbmserv` subprocess on a real database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Address, InboxMessage, OutboxMessage, User
from pbmserv.runtime.processor import process_pending
from tests.e2e.admin.test_admin import Shell, play, text_of
from tests.e2e.processes import run_pbmserv, seed_game, spool_messages
from tests.support import make_mail

pytestmark = pytest.mark.db

#: A relay's answer as delivery stores it: the hint naming the setting comes last.
LONG_ERROR = (
    "the relay's certificate does not check out: [SSL: CERTIFICATE_VERIFY_FAILED] certificate "
    "verify failed: unable to get local issuer certificate (_ssl.c:1006); set relay_ca_file to "
    "the CA that signed it, or relay_tls_server_name to the name in it"
)


@pytest.fixture
def shell(db_url: str, engine, tmp_path: Path) -> Shell:  # type: ignore[no-untyped-def]
    seed_game(engine)  # alice and bob, chameleon board 1, alice to move
    return Shell(db_url, tmp_path)


def add_outbox(engine, count: int, status: str = "pending", error: str | None = None) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC)
    with transaction(session_factory(engine)) as session:
        for i in range(count):
            session.add(
                OutboxMessage(
                    message_id=f"<q{status}{i}@x>",
                    recipient="alice@example.org",
                    kind="reply",
                    raw=b"Subject: x\r\n\r\nx\r\n",
                    status=status,
                    attempts=1,
                    next_attempt_at=now + timedelta(hours=1),
                    created_at=now,
                    last_error=error,
                )
            )


def test_outbox_list_shows_the_whole_error_with_its_hint(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    assert len(LONG_ERROR) > 200
    add_outbox(engine, 1, error=LONG_ERROR)
    [row] = shell.json("outbox", "list")
    assert row["error"] == LONG_ERROR  # --json never cuts
    table = shell.run("outbox", "list", "--status", "pending")
    assert LONG_ERROR in table  # nor does the table: the hint is its end


def test_inbox_list_shows_held_messages(shell: Shell, engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mail = make_mail("carol@example.net", "", "signup carol pw-carol1\n", to="pbmserv@localhost")
    env = {**shell.env, "PBMSERV_CONFIRM_ADDRESSES": "true"}
    stored = run_pbmserv(["mail", "-f", "carol@example.net"], env, mail.as_bytes())
    assert stored.returncode == 0, stored.stderr.decode()
    [held] = shell.json("inbox", "list", "--status", "held")
    assert (held["from"], held["status"]) == ("carol@example.net", "held")
    assert "carol@example.net" in shell.run("inbox", "list", "--status", "held")


def test_lists_say_when_they_stop_short_or_match_nothing(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    add_outbox(engine, 3, status="sent")
    table = shell.run("outbox", "list", "--limit", "2")
    assert table.count("alice@example.org") == 2
    assert table.rstrip().endswith("(1 more, older; use --limit 3 to see them all)")
    # With --json the array is all of standard output; the note goes to standard error.
    result = run_pbmserv(["admin", "outbox", "list", "--limit", "2", "--json"], shell.env)
    assert result.returncode == 0 and len(json.loads(result.stdout)) == 2
    assert b"1 more" in result.stderr
    assert "more" not in shell.run("outbox", "list")  # all of them: nothing to say
    assert shell.run("outbox", "list", "--status", "failed").strip() == (
        "(no outbox message has status failed)"
    )
    assert shell.run("inbox", "list").strip() == "(inbox is empty)"
    assert shell.run("inbox", "list", "--status", "failed").strip() == (
        "(no inbox message has status failed)"
    )
    assert "must be 1 or more" in shell.run("outbox", "list", "--limit", "0", ok=False)
    assert shell.run("games", "list", "--status", "finished").strip() == (
        "(no boards match the filters)"
    )


def test_games_list_has_a_result_column(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    assert play(engine, "chameleon resign 1 bob hunter22", "bob@example.org")
    [board] = shell.json("games", "list")
    assert board["status"] == "finished" and board["result"].startswith("alice won (")
    header = shell.run("games", "list").splitlines()[0]
    assert header.split()[-1] == "RESULT"
    play(engine, "chameleon challenge -size=3 bob alice", "bob@example.org")
    assert shell.json("games", "list", "--status", "active")[0]["result"] == ""


def test_the_operator_confirms_an_address_whose_mail_was_lost(
    shell: Shell, engine, db_url: str
) -> None:  # type: ignore[no-untyped-def]
    env = {**shell.env, "PBMSERV_CONFIRM_ADDRESSES": "true"}
    signup = make_mail("carol@example.net", "", "signup carol pw-carol1\n", to="pbmserv@localhost")
    stored = run_pbmserv(["mail", "-f", "carol@example.net"], env, signup.as_bytes())
    assert stored.returncode == 0, stored.stderr.decode()
    lost = shell.new_mail()  # the confirmation mail, lost on its way
    assert [m["To"] for m in lost] == ["carol@example.net"]

    done = run_pbmserv(["admin", "users", "confirm", "Carol@Example.net"], env)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == (
        "carol@example.net is confirmed: 1 held message(s) released for the server to process"
    )
    with engine.connect() as conn:
        assert conn.scalar(select(InboxMessage.status)) == "pending"
        assert (
            conn.scalar(select(Address.code).where(Address.address == "carol@example.net")) is None
        )
    # The server processes the released signup as if carol had replied.
    process_pending(session_factory(engine), Settings(db_url=db_url))
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "carol")) == "carol@example.net"
    welcome = shell.new_mail()
    assert [m["To"] for m in welcome] == ["carol@example.net"]
    assert "Welcome, carol!" in text_of(welcome[0])

    # Again: nothing to do, said politely; and a user id is not an address.
    again = shell.run("users", "confirm", "carol@example.net", ok=False)
    assert "already confirmed; nothing was changed" in again
    wrong = shell.run("users", "confirm", "carol", ok=False)
    assert '"carol" is not a mail address' in wrong and "users show" in wrong


def test_confirming_by_hand_leaves_another_users_request_to_the_owner(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    """`email NEW` waits for NEW's owner's yes to it: the operator vouching for NEW's owner
    is no yes to bob's move (issue 48), which `users set-email` makes by hand."""
    with transaction(session_factory(engine)) as session:
        asked = CommandContext(session, Settings(), "bob@example.org")  # addresses confirmed
        assert dispatch_line(asked, "email bob hunter22 robert@example.net").ok
    with engine.connect() as conn:  # its confirmation mail was lost
        waiting = conn.scalar(select(User.pending_email).where(User.userid == "bob"))
        assert waiting == "robert@example.net"
    out = shell.json("users", "confirm", "robert@example.net")
    assert out["message"] == (
        "robert@example.net is confirmed: 0 held message(s) released for the server to "
        "process; 1 other request(s) wait for its owner's own reply (or are dropped within "
        "7 days)"
    )
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "bob")) == "bob@example.org"
    assert shell.new_mail() == []  # nobody was told of a move that did not happen
    out = shell.json("users", "set-email", "bob", "robert@example.net")
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "bob")) == "robert@example.net"
    told = sorted(m["To"] for m in shell.new_mail() if m["Subject"] != "chameleon board 1")
    assert told == ["bob@example.org", "robert@example.net"]
    assert spool_messages(shell.spool)  # delivered through `pbmserv deliver`, as a server would
