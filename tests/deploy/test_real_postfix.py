"""pbmserv behind a real Postfix (Debian's), started privately by each test on loopback.

Players write to pbmserv@games.example.org through Postfix, which relays to pbmserv's listener;
pbmserv relays its mail back through Postfix over STARTTLS (the certificate checked against a
test CA), DKIM-signed; Postfix delivers it into the players' maildirs, and a recipient that
another server refuses comes back to pbmserv as a real delivery status notification.

These run wherever Postfix is installed and the tests run as root (CI installs it and must run
them: there a missing Postfix fails the tests instead of skipping them).
"""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dkim
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, func, select, text

from pbmserv.config import Settings
from pbmserv.db.models import InboxMessage, OutboxMessage
from pbmserv.outbound.signing import new_key, public_key_record
from tests.deploy.real_postfix import (
    GAME_DOMAIN,
    GONE_DOMAIN,
    PLAYER_DOMAIN,
    RealPostfix,
    free_port,
    require_postfix,
)
from tests.support import RunningServer, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

PBMSERV = f"pbmserv@{GAME_DOMAIN}"
SELECTOR = "pbmserv"
ALICE, BOB = f"alice@{PLAYER_DOMAIN}", f"bob@{PLAYER_DOMAIN}"
CAROL = f"carol@{GONE_DOMAIN}"
# pbmserv's envelope sender: a return path of each mail's own (pbmserv+bounce-ID-MAC@...).
SENDER = rf"pbmserv\+bounce-\d+-[a-z2-7]+@{re.escape(GAME_DOMAIN)}"
RETURN_PATH = re.compile(rf"<{SENDER}>")


class RefusingHandler:
    """Another site's MX that knows none of its users: 550 at RCPT, as Postfix would say it."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self.lock = threading.Lock()

    async def handle_RCPT(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        with self.lock:
            self.refused.append(address)
        return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"


@dataclass
class World:
    postfix: RealPostfix
    server: RunningServer
    engine: Engine
    key_pem: bytes
    gone: RefusingHandler
    keep: Path
    players: list[str] = field(default_factory=list)

    def send(self, sender: str, subject: str, body: str = "") -> None:
        """A player's command, into Postfix's port for pbmserv's address; returns once pbmserv
        has answered it and Postfix has delivered every answer to the players' maildirs."""
        message = make_mail(sender, subject, body, to=PBMSERV)
        code, reply = smtp_send(self.postfix.port, message, to=PBMSERV)
        assert code == 250, (code, reply)
        self.wait_processed(str(message["Message-ID"]).strip("<>"))
        settle(self.engine)
        for player in self.players:
            self.postfix.wait_for_mail(player.split("@")[0], self.sent_to(player))

    def wait_processed(self, message_id: str, timeout: float = 20.0) -> None:
        """Until pbmserv has stored the message with this Message-ID and processed it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.engine.connect() as conn:
                rows = conn.execute(select(InboxMessage.dedupe_key, InboxMessage.status)).all()
            if any(message_id in key and status != "pending" for key, status in rows):
                return
            time.sleep(0.05)
        raise AssertionError(
            f"pbmserv did not get or process {message_id}\n--- Postfix log ---\n"
            + self.postfix.log()
        )

    def sent_to(self, address: str) -> int:
        with self.engine.connect() as conn:
            return int(
                conn.scalar(
                    select(func.count())
                    .select_from(OutboxMessage)
                    .where(OutboxMessage.recipient == address, OutboxMessage.status == "sent")
                )
                or 0
            )

    def dns(self, name: bytes, timeout: int = 5) -> bytes | None:
        """The DNS of the test: the one DKIM key record pbmserv's domain publishes."""
        if name.decode().rstrip(".").lower() == f"{SELECTOR}._domainkey.{GAME_DOMAIN}":
            return public_key_record(self.key_pem).encode()
        return None


@pytest.fixture
def world(db_url: str, engine: Engine, tmp_path: Path) -> Iterator[World]:
    require_postfix()
    key_pem = new_key()
    key_file = tmp_path / "dkim.pem"
    key_file.write_bytes(key_pem)
    gone = RefusingHandler()
    sink = Controller(gone, hostname="127.0.0.1", port=free_port())
    postfix = RealPostfix(listen_port=free_port(), sink_port=sink.port, keep_dir=tmp_path)
    server: RunningServer | None = None
    try:
        sink.start()
        postfix.start()
        settings = Settings(
            confirm_addresses=False,
            db_url=db_url,
            listen=f"127.0.0.1:{postfix.listen_port}",
            address=PBMSERV,
            relay=f"127.0.0.1:{postfix.port}",
            relay_tls="starttls",
            relay_tls_server_name=postfix.server_name,
            relay_ca_file=postfix.ca_file,
            dkim_selector=SELECTOR,
            dkim_key_file=key_file,
            dkim_domain=GAME_DOMAIN,
            spool=tmp_path / "spool",
            poll_seconds=0.2,
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        server = RunningServer(settings).start()
        assert server.server is not None and server.server.port == postfix.listen_port
        yield World(postfix, server, engine, key_pem, gone, tmp_path)
    finally:
        if server is not None:
            server.stop()
        postfix.stop()
        sink.stop(no_assert=True)
    # No process of the instance is left behind (the master neither), and none had to be
    # killed: `postfix stop` ended them all.
    assert postfix.processes() == [] and postfix.killed == []
    assert postfix.master_pid is None or not _alive(postfix.master_pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _group(pattern: str, line: str) -> str:
    found = re.search(pattern, line)
    assert found is not None, (pattern, line)
    return found[1]


def _headers(raw: bytes) -> str:
    return raw.split(b"\n\n", 1)[0].decode("utf-8", "replace")


def _crlf(raw: bytes) -> bytes:
    """A maildir keeps local line ends; DKIM is computed over the message as on the wire."""
    return re.sub(rb"\r?\n", b"\r\n", raw)


def test_a_game_by_mail_through_postfix_with_tls_and_dkim(world: World) -> None:
    postfix = world.postfix
    world.players = [ALICE, BOB]
    world.send(ALICE, "signup alice secret1 Alice")
    world.send(BOB, "signup bob hunter22 Bob")
    world.send(ALICE, "extinction challenge alice bob")
    world.send(ALICE, "extinction move 1 alice secret1 e4")
    world.send(BOB, "extinction move 1 bob hunter22 d5")

    alice, bob = postfix.mailbox("alice"), postfix.mailbox("bob")
    assert len(alice) == world.sent_to(ALICE) >= 3
    assert len(bob) == world.sent_to(BOB) >= 3
    for raw in alice + bob:
        message = email.message_from_bytes(raw, policy=email.policy.default)
        # Postfix's virtual(8) put the envelope sender on top, as a Return-Path.
        assert raw.startswith(b"Return-Path: "), _headers(raw)
        assert RETURN_PATH.fullmatch(str(message["Return-Path"])), message["Return-Path"]
        # Signed by pbmserv, and the signature holds after the trip through Postfix.
        signature = str(message["DKIM-Signature"])
        assert re.search(rf"\bd={re.escape(GAME_DOMAIN)};", signature), signature
        assert re.search(rf"\bs={SELECTOR};", signature), signature
        assert dkim.verify(_crlf(raw), dnsfunc=world.dns), _headers(raw)
        # pbmserv handed it to Postfix inside TLS (the Received line smtpd added says so).
        received = " ".join(str(value) for value in message.get_all("Received", []))
        assert re.search(r"\(using TLSv1\.[23] with cipher", received), received
        assert "by mx.games.example.org (Postfix) with ESMTPS id" in received, received

    # A board mail: Bob's, after Alice's move and his answer.
    boards = [raw for raw in bob if b"\nReply-To: " in raw.split(b"\n\n", 1)[0]]
    assert len(boards) >= 2, [_headers(raw) for raw in bob]
    board = email.message_from_bytes(boards[-1], policy=email.policy.default)
    body = board.get_body(preferencelist=("plain",))
    assert body is not None and "Moves played" in body.get_content()
    header_block = _headers(boards[-1])
    (world.keep / "board-mail-headers.txt").write_text(header_block + "\n")

    # The Postfix log: pbmserv's connections were TLS, each delivery went into a maildir.
    tls = postfix.wait_for_log(r"smtpd\[\d+\]: Anonymous TLS connection established from ")
    queue_id = re.search(r"with ESMTPS id (\w+)", str(board["Received"]))
    assert queue_id is not None
    trail = [line for line in postfix.log().splitlines() if f" {queue_id[1]}: " in line]
    assert any("status=sent (delivered to maildir)" in line for line in trail), trail
    assert any(f"from=<{board['Return-Path'].strip('<>')}>" in line for line in trail), trail
    inbound = postfix.wait_for_log(rf"to=<{re.escape(PBMSERV)}>, relay=127\.0\.0\.1.*status=sent")
    print("\n--- a board mail's headers, as delivered ---\n" + header_block)
    print("--- Postfix log: TLS from pbmserv ---\n" + "\n".join(tls[:3]))
    print(f"--- Postfix log: the board mail ({queue_id[1]}) ---\n" + "\n".join(trail))
    print("--- Postfix log: a player's command relayed to pbmserv ---\n" + inbound[0])


def test_a_refused_recipient_comes_back_as_a_dsn_and_marks_the_address(world: World) -> None:
    postfix = world.postfix
    world.players = [ALICE]
    limit = world.server.settings.bounce_limit
    world.send(ALICE, "signup alice secret1 Alice")
    world.send(CAROL, "signup carol pass3333 Carol")  # her welcome is the first refused mail
    for n in range(1, limit):
        world.send(ALICE, f"message alice secret1 carol hello {n}")

    # Postfix tried gone.example.net's server, was refused at RCPT, and wrote a DSN to the
    # envelope sender of each refused mail: pbmserv, relayed to its listener.
    refused = rf"to=<{re.escape(CAROL)}>, .*status=bounced"
    bounced = postfix.wait_for_log(refused, count=limit)
    assert all("said: 550 5.1.1" in line for line in bounced), bounced
    assert world.gone.refused.count(CAROL) >= limit
    dsn_ids = [
        line.rsplit(": ", 1)[1]
        for line in postfix.wait_for_log(r"sender non-delivery notification: ", count=limit)
    ]
    trails = {}
    for dsn_id in dsn_ids:
        to_pbmserv = rf" {dsn_id}: to=<{SENDER}>, relay=127\.0\.0\.1\["
        sent = postfix.wait_for_log(to_pbmserv + rf".*:{postfix.listen_port}, .*status=sent")
        [message_id] = postfix.wait_for_log(rf" {dsn_id}: message-id=<")
        [sender] = postfix.wait_for_log(rf" {dsn_id}: from=<>")
        trails[message_id.rsplit("message-id=<", 1)[1].rstrip(">")] = [message_id, sender, *sent]

    # pbmserv took each report (null sender, from Postfix's MAILER-DAEMON) and processed it.
    for message_id in trails:
        world.wait_processed(message_id)
    settle(world.engine)
    with world.engine.connect() as conn:
        reports = conn.execute(
            select(InboxMessage.dedupe_key, InboxMessage.envelope_to, InboxMessage.summary)
            .where(InboxMessage.envelope_from == "")
            .order_by(InboxMessage.id)
        ).all()
    assert len(reports) == limit and all(
        any(message_id in row.dedupe_key for message_id in trails) for row in reports
    ), reports
    print("\n--- Postfix log: a refused mail and its DSN to pbmserv ---")
    print("\n".join([bounced[0], *next(iter(trails.values()))]))
    summaries = "\n".join(f"{row.envelope_to!r}: {row.summary}" for row in reports)
    print("--- pbmserv's inbox: the DSNs (envelope_to, summary) ---\n" + summaries)

    # Each refused mail went out with a return path of its own, which its DSN came back to.
    refused_ids = [_group(r"\]: (\w+): to=", line) for line in bounced]
    senders = {
        _group(r"from=<([^>]*)>", line)
        for queue_id in refused_ids
        for line in postfix.wait_for_log(rf" {queue_id}: from=<")
    }
    assert all("+bounce-" in sender for sender in senders), (
        f"pbmserv's mail to {CAROL} left with the return path(s) {sorted(senders)}, not one "
        f"bounce address a mail, so its DSNs cannot be told apart; pbmserv made of them:\n"
        + summaries
    )

    # pbmserv counted the hard bounces and marked the address as bouncing.
    with world.engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT hard_bounces, bouncing_since, last_bounce FROM addresses"
                " WHERE address = :address"
            ),
            {"address": CAROL},
        ).first()
    assert row is not None, f"no addresses row for {CAROL}; pbmserv's DSNs:\n{summaries}"
    assert row.hard_bounces >= limit and row.bouncing_since is not None, (row, summaries)
    assert "5.1.1" in (row.last_bounce or ""), row
