"""`pbmserv admin` and `pbmserv config`, each run as a real subprocess on a real database.

The shell only queues the mail it causes; `pbmserv deliver` (as a server would) writes it to the
spool folder, where these tests read it.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import GameRow, InboxMessage, MoveRow, OutboxMessage, User
from pbmserv.inbound.inbox import Stored, store_message
from tests.e2e.processes import environment, run_pbmserv, seed_game, spool_messages
from tests.support import make_mail

pytestmark = pytest.mark.db


class Shell:
    """Runs `pbmserv admin ...` against one database and spool."""

    def __init__(self, db_url: str, tmp_path: Path) -> None:
        self.spool = tmp_path / "spool"
        self.env = environment(db_url, self.spool)
        self.seen = 0

    def run(self, *args: str, ok: bool = True) -> str:
        result = run_pbmserv(["admin", *args], self.env)
        assert (result.returncode == 0) == ok, result.stderr.decode()
        return (result.stdout if ok else result.stderr).decode()

    def json(self, *args: str) -> object:
        return json.loads(self.run(*args, "--json"))

    def new_mail(self) -> list:
        """Messages the shell queued since the last call, delivered by `pbmserv deliver`."""
        delivered = run_pbmserv(["deliver"], self.env)
        assert delivered.returncode == 0, delivered.stderr.decode()
        messages = spool_messages(self.spool)
        fresh, self.seen = messages[self.seen :], len(messages)
        for message in fresh:
            assert_from_the_server(message)
        return fresh


SERVER = Settings().address  # the address these tests' server runs with (its default)


def assert_from_the_server(message) -> None:  # type: ignore[no-untyped-def]
    """Every mail an admin command queues is the server's own: From, Message-ID, X-Loop and
    any Reply-To at the server's address and domain, whatever the command's arguments."""
    local, domain = SERVER.split("@")
    assert message["From"].addresses[0].addr_spec == SERVER, message["From"]
    assert message["Message-ID"].strip("<>").endswith("@" + domain), message["Message-ID"]
    assert message["X-Loop"] in (None, SERVER), message["X-Loop"]
    if message["Reply-To"]:
        reply_to = message["Reply-To"].addresses[0].addr_spec
        assert reply_to.startswith(local + "+") and reply_to.endswith("@" + domain), reply_to


def text_of(message) -> str:  # type: ignore[no-untyped-def]
    """The text of a mail, board mail with a picture included (its text/plain part)."""
    return message.get_body(("plain",)).get_content()


def headline(message) -> str:  # type: ignore[no-untyped-def]
    """What a mail tells first: a board's mail keeps one Subject, its news is the first line."""
    return str(text_of(message).splitlines()[0])


def play(engine, line: str, sender: str) -> bool:  # type: ignore[no-untyped-def]
    with transaction(session_factory(engine)) as session:
        return dispatch_line(
            CommandContext(session, Settings(confirm_addresses=False), sender), line
        ).ok


@pytest.fixture
def shell(db_url: str, engine, tmp_path: Path) -> Shell:  # type: ignore[no-untyped-def]
    seed_game(engine)  # alice and bob, chameleon board 1, alice to move
    return Shell(db_url, tmp_path)


def test_users_list_show_disable_enable(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    table = shell.run("users", "list")
    assert table.splitlines()[0].split()[:3] == ["USERID", "EMAIL", "NAME"]
    listed = shell.json("users", "list")
    people = [(u["userid"], u["active_boards"]) for u in listed if u["robot"] is None]
    assert people == [("alice", 1), ("bob", 1)]
    assert [(u["userid"], u["robot"]) for u in listed if u["robot"]] == [
        ("robot1", 1),
        ("robot2", 2),
        ("robot3", 3),
    ]
    shown = shell.json("users", "show", "ALICE")
    assert shown["email"] == "alice@example.org" and shown["boards"] == ["chameleon 1 (active)"]
    assert "disabled" in shell.run("users", "disable", "alice")
    assert shell.json("users", "list", "--disabled")[0]["userid"] == "alice"
    assert not play(engine, "chameleon move 1 alice secret1 c3x", "alice@example.org")
    shell.run("users", "enable", "alice")
    assert play(engine, "chameleon move 1 alice secret1 c3x", "alice@example.org")
    assert "no user" in shell.run("users", "show", "nobody", ok=False)


def test_reset_password_mails_a_working_new_one(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    output = shell.run("users", "reset-password", "bob")
    assert "mailed to bob@example.org" in output
    # The new password, and bob's board again with its seat's new reply address.
    mail, board = sorted(
        shell.new_mail(), key=lambda m: m["Subject"] != "pbmserv: new password for bob"
    )
    assert mail["To"] == "bob@example.org" and board["To"] == "bob@example.org"
    assert board["Subject"] == "chameleon board 1" and "reply address has changed" in text_of(board)
    password = re.search(r"^    (\S+)$", mail.get_content(), re.M).group(1)  # type: ignore[union-attr]
    assert password not in output  # the operator's screen never shows it
    play(engine, "chameleon move 1 alice secret1 c3x", "alice@example.org")
    assert not play(engine, "chameleon move 1 bob hunter22 c2o", "bob@example.org")
    assert play(engine, f"chameleon move 1 bob {password} c2o", "bob@example.org")


def test_set_email_tells_both_addresses(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    shell.run("users", "set-email", "bob", "robert@example.net")
    mailed = shell.new_mail()
    assert sorted(m["To"] for m in mailed) == [
        "bob@example.org",
        "robert@example.net",
        "robert@example.net",  # bob's board, with its seat's new reply address
    ]
    assert [m["Subject"] for m in mailed if m["Reply-To"]] == ["chameleon board 1"]
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "bob")) == "robert@example.net"
    assert "not a mail address" in shell.run("users", "set-email", "bob", "nope", ok=False)


def test_games_list_filters_and_show_views(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    play(engine, "chameleon challenge -size=3 bob alice", "bob@example.org")
    everything = shell.json("games", "list")
    assert [b["board"] for b in everything] == [1, 2]
    assert [
        b["board"] for b in shell.json("games", "list", "--player", "bob", "--game", "chameleon")
    ] == [1, 2]
    assert shell.json("games", "list", "--status", "finished") == []
    assert shell.json("games", "list", "--idle-days", "1") == []
    shown = shell.run("games", "show", "1", "--as", "alice")
    assert shown.startswith("Chameleon, board 1: alice (Vert) vs bob (Horz)")
    assert "to move: alice" in shown
    assert shell.run("games", "show", "2", "--as", "public").startswith("Chameleon, board 2")
    assert "not a player" in shell.run("games", "show", "1", "--as", "carol", ok=False)
    assert "no board 9" in shell.run("games", "show", "9", ok=False)


def test_undo_takes_back_the_last_move_and_tells_the_players(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    play(engine, "chameleon move 1 alice secret1 c3x", "alice@example.org")
    play(engine, "chameleon move 1 bob hunter22 c2o", "bob@example.org")
    with engine.connect() as conn:
        before = conn.execute(select(GameRow.state, GameRow.ply)).one()
    assert "took back move 2 (c2o)" in shell.run("games", "undo", "1")
    with engine.connect() as conn:
        row = conn.execute(select(GameRow.state, GameRow.ply, GameRow.to_move)).one()
        kinds = conn.scalars(select(MoveRow.kind).order_by(MoveRow.id)).all()
    assert row.ply == 1 and row.to_move == "1" and row.state != before.state
    assert kinds == ["move", "undo"]
    mails = shell.new_mail()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    assert all("The operator took back move 2 (c2o)." in text_of(m) for m in mails)
    # The move can be played again, and the board replays to the same state as before.
    assert play(engine, "chameleon move 1 bob hunter22 c2o", "bob@example.org")
    with engine.connect() as conn:
        assert conn.scalar(select(GameRow.state)) == before.state


def test_undo_reopens_a_resigned_board(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    play(engine, "chameleon resign 1 alice secret1", "alice@example.org")
    assert "reopened the game ended by resign" in shell.run("games", "undo", "1")
    with engine.connect() as conn:
        assert conn.execute(select(GameRow.status, GameRow.result)).one() == ("active", None)
    assert "no move to take back" in shell.run("games", "undo", "1", ok=False)


def test_json_errors_are_json_with_the_same_exit_code(shell: Shell) -> None:
    plain = run_pbmserv(["admin", "games", "undo", "9"], shell.env)
    assert plain.returncode == 1 and b"no board 9" in plain.stderr
    scripted = run_pbmserv(["admin", "games", "undo", "9", "--json"], shell.env)
    assert scripted.returncode == plain.returncode
    answer = json.loads(scripted.stdout)
    assert answer["ok"] is False and "no board 9" in answer["error"]
    assert b"no board 9" not in scripted.stderr


def test_adjudicate_and_delete(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    out = shell.json("games", "adjudicate", "1", "--winner", "bob", "--reason", "alice left")
    assert "bob (Horz) won (adjudicated by the operator: alice left)" in out["message"]
    subjects = sorted(headline(m) for m in shell.new_mail())
    assert subjects == ["chameleon board 1: you lost", "chameleon board 1: you won"]
    assert "already over" in shell.run("games", "adjudicate", "1", "--draw", ok=False)
    with engine.connect() as conn:
        assert conn.scalar(select(MoveRow.kind)) == "adjudicate"
    # Not from a script without --yes: it cannot be undone.
    assert "add --yes" in shell.run("games", "delete", "1", ok=False)
    with engine.connect() as conn:
        assert conn.scalar(select(GameRow.id)) == 1
    shell.run("games", "delete", "1", "--yes")
    assert {m["Subject"] for m in shell.new_mail()} == {"chameleon board 1 was deleted"}
    with engine.connect() as conn:
        assert conn.scalar(select(GameRow.id)) is None


def test_unknown_values_are_refused_with_the_valid_ones(shell: Shell) -> None:
    wrong = shell.run("inbox", "list", "--status", "bogus", ok=False)
    assert "invalid choice: 'bogus'" in wrong and "'pending'" in wrong and "'failed'" in wrong
    assert "'chameleon'" in shell.run("games", "list", "--game", "nosuch", ok=False)


def test_a_listing_piped_into_head_ends_quietly(shell: Shell) -> None:
    """`pbmserv admin ... --json | head`: the reader goes before the output is written."""
    import subprocess

    from tests.e2e.processes import PBMSERV

    proc = subprocess.Popen(
        [*PBMSERV, "admin", "games", "list", "--json"],
        env=shell.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like head after its first line: every write now fails (EPIPE)
    error = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in error and b"BrokenPipe" not in error


def test_inbox_and_outbox_list_retry_purge(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC)
    with transaction(session_factory(engine)) as session:
        session.add(
            InboxMessage(
                dedupe_key="k1",
                envelope_from="x@example.org",
                raw=b"Subject: help\r\n\r\nhelp\r\n",
                received_at=now,
                status="failed",
                attempts=3,
                error="RuntimeError: boom",
            )
        )
        for i, status in enumerate(("sent", "failed")):
            session.add(
                OutboxMessage(
                    message_id=f"<m{i}@x>",
                    recipient="alice@example.org",
                    kind="reply",
                    raw=b"Subject: x\r\n\r\nx\r\n",
                    status=status,
                    attempts=1,
                    next_attempt_at=now,
                    created_at=now - timedelta(days=10),
                    last_error="550 no such user" if status == "failed" else None,
                )
            )
    failed = shell.json("inbox", "list", "--status", "failed")
    assert [(m["from"], m["result"]) for m in failed] == [("x@example.org", "RuntimeError: boom")]
    assert "1 inbox message(s) queued again" in shell.run("inbox", "retry", "--failed")
    with engine.connect() as conn:
        assert conn.scalar(select(InboxMessage.status)) == "pending"
    assert "550 no such user" in shell.run("outbox", "list", "--status", "failed")
    assert "has not failed" in shell.run("outbox", "retry", "999", ok=False)
    # A move processed long ago: purging empties it but keeps its key.
    old_move = make_mail("bob@example.org", "chameleon move 1 bob hunter22 a1x").as_bytes()
    factory = session_factory(engine)
    assert (
        store_message(factory, Settings(confirm_addresses=False), old_move, "bob@example.org")
        is Stored.ACCEPTED
    )
    with transaction(factory) as session:
        session.execute(
            update(InboxMessage)
            .where(InboxMessage.envelope_from == "bob@example.org")
            .values(status="done", received_at=now - timedelta(days=30))
        )
    purged = shell.json("outbox", "purge", "--older-than", "7")
    assert purged["outbox"] == 1 and purged["inbox"] == 1
    with engine.connect() as conn:
        assert list(conn.scalars(select(OutboxMessage.status))) == ["failed"]
        kept = conn.scalar(select(InboxMessage.raw).where(InboxMessage.status == "done"))
        assert kept == b""
    # Delivered again a month later: still known, not played twice.
    assert (
        store_message(factory, Settings(confirm_addresses=False), old_move, "bob@example.org")
        is Stored.DUPLICATE
    )
    assert shell.run("outbox", "retry", "--failed").startswith("1 outbox message(s)")


def test_maintain_reminds_once_then_forfeits_on_a_controlled_clock(shell: Shell, engine) -> None:  # type: ignore[no-untyped-def]
    start = datetime(2030, 1, 1, tzinfo=UTC)
    with transaction(session_factory(engine)) as session:
        session.execute(update(GameRow).values(updated_at=start))

    def at(days: float) -> str:
        return (start + timedelta(days=days)).isoformat()

    assert shell.json("maintain", "--now", at(6))["reminded"] == []
    assert shell.json("maintain", "--now", at(8))["reminded"] == [1]
    reminders = shell.new_mail()
    assert sorted(headline(m) for m in reminders) == [
        "chameleon board 1: reminder, waiting for alice",
        "chameleon board 1: reminder, your move",
    ]
    assert any("waited 8 days for your move" in text_of(m) for m in reminders)
    assert shell.json("maintain", "--now", at(9))["reminded"] == []  # once per idle spell
    assert shell.json("maintain", "--now", at(29))["forfeited"] == [1]
    with engine.connect() as conn:
        result = conn.scalar(select(GameRow.result))
        assert conn.scalar(select(MoveRow.kind)) == "forfeit"
    assert result["winners"] == [1] and "made no move in 28 days" in result["reason"]
    assert sorted(headline(m) for m in shell.new_mail()) == [
        "chameleon board 1: you lost",
        "chameleon board 1: you won",
    ]


def test_per_game_limits_from_the_config_file(shell: Shell, engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "pbmserv.toml"
    config.write_text("remind_after_days = 2\n[games.chameleon]\nforfeit_after_days = 3\n")
    start = datetime(2030, 1, 1, tzinfo=UTC)
    with transaction(session_factory(engine)) as session:
        session.execute(update(GameRow).values(updated_at=start))
    later = (start + timedelta(days=3.5)).isoformat()
    out = shell.json("maintain", "--config", str(config), "--now", later)
    assert out["reminded"] == [1] and out["forfeited"] == []  # overdue: a reminder comes first
    notice = (start + timedelta(days=5.5)).isoformat()  # the default two days' notice after it
    assert shell.json("maintain", "--config", str(config), "--now", notice)["forfeited"] == [1]


def test_config_show_masks_secrets_and_reports_errors(shell: Shell, tmp_path: Path) -> None:
    config = tmp_path / "pbmserv.toml"
    config.write_text(
        'db_url = "postgresql+psycopg://pbm:hunter2@db.example/pbm"\n'
        'relay = "mail.example:587"\nrelay_password = "s3cret"\nlog_format = "json"\n'
    )
    env = {**shell.env, "PBMSERV_RATE_LIMIT": "42"}
    env.pop("PBMSERV_DB")
    result = run_pbmserv(["config", "show", "--json", "--config", str(config)], env)
    shown = json.loads(result.stdout)
    assert shown["db_url"] == "postgresql+psycopg://pbm:********@db.example/pbm"
    assert shown["relay_password"] == "********" and shown["rate_limit_per_hour"] == 42
    assert b"hunter2" not in result.stdout and b"s3cret" not in result.stdout
    config.write_text("colour = 3\n")
    bad = run_pbmserv(["config", "show", "--config", str(config)], env)
    assert bad.returncode == 78 and b"unknown setting 'colour'" in bad.stderr


def test_broadcast_mails_every_enabled_user_with_the_subject_made_safe(
    shell: Shell, engine
) -> None:  # type: ignore[no-untyped-def]
    play(engine, "signup carol pass3333", "carol@example.org")
    play(engine, "chameleon resign 1 alice secret1", "alice@example.org")
    shell.run("users", "disable", "bob")
    done = shell.run(
        "broadcast", "--subject", "Downtime\r\nBcc: evil@example.org", "--text", "Back soon."
    )
    assert "broadcast to 2 user(s)" in done
    mails = shell.new_mail()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "carol@example.org"]
    assert all(m["Subject"] == "pbmserv: Downtime Bcc: evil@example.org" for m in mails)
    assert all(m["Bcc"] is None for m in mails)
    assert "Back soon." in mails[0].get_content()
    shell.run("users", "enable", "bob")
    play(engine, "chameleon challenge -size=3 bob alice", "bob@example.org")
    shell.run("broadcast", "--subject", "Players", "--text", "hi", "--playing")
    assert sorted(m["To"] for m in shell.new_mail()) == ["alice@example.org", "bob@example.org"]
    assert "subject must be" in shell.run("broadcast", "--subject", " ", "--text", "x", ok=False)
    news = shell.spool.parent / "news.txt"
    news.write_text("The spring tournament opens on Monday.\n")
    shell.run("broadcast", "--subject", "News", "--file", str(news))
    assert "spring tournament" in shell.new_mail()[0].get_content()
    missing = shell.run("broadcast", "--subject", "x", "--file", str(news) + ".gone", ok=False)
    assert "cannot read" in missing
