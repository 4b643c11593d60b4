"""A private Dovecot IMAP server for the hosted-mailbox tests and bench (Debian's
``dovecot-imapd``), started on free loopback ports and thrown away afterwards; and a game
stream played through it by `pbmserv serve --imap` under forced disconnects (``play_stream``).

Two users share one Maildir: the server's mailbox (``USER``, which pbmserv reads) and the
provider's delivery (``FEEDER``), which APPENDs the players' mail into it. Kicking ``USER``'s
connections (a forced disconnect) then leaves the delivery alone.

As root, Dovecot refuses to run its login and mail processes as root: they run as the
package's ``dovenull`` and ``dovecot`` users, and the instance lives in a folder of its own
under /tmp that they can reach (pytest's tmp_path is private to root).
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import grp
import os
import pwd
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from imapclient import IMAPClient
from sqlalchemy import select

from pbmserv.db.engine import make_engine
from pbmserv.db.models import MoveRow
from pbmserv.games import find_game
from tests.e2e.processes import environment
from tests.support import free_port

DOVECOT = Path("/usr/sbin/dovecot")
DOVEADM = Path("/usr/bin/doveadm")
USER, PASSWORD = "pbm@games.example", "mailbox-secret-1"
FEEDER, FEEDER_PASSWORD = "delivery@games.example", "delivery-secret-1"
FOLDER = "INBOX"


class Dovecot:
    """One Dovecot instance: IMAP (STARTTLS when it has a certificate) and IMAPS ports.

    ``ca`` (a ``trustme.CA``) gives it a certificate for 127.0.0.1 and turns TLS on (then
    plain-text logins are refused outside TLS); clients trust ``ca_file``. ``capabilities``
    replaces what the server announces after login (without IDLE and MOVE: an old server).
    """

    def __init__(self, workdir: Path, ca: Any = None, capabilities: str | None = None) -> None:
        self.root = os.geteuid() == 0
        self.dir = Path(tempfile.mkdtemp(prefix="pbm-dovecot-")) if self.root else workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o755)
        self.port, self.tls_port = free_port(), free_port()
        self.ca_file = self.dir / "ca.pem"
        self.tls = ca is not None
        if ca is not None:
            leaf = ca.issue_cert("127.0.0.1", "localhost")
            leaf.cert_chain_pems[0].write_to_path(str(self.dir / "cert.pem"))
            leaf.private_key_pem.write_to_path(str(self.dir / "key.pem"))
            ca.cert_pem.write_to_path(str(self.ca_file))
        self.conf = self.dir / "dovecot.conf"
        self.conf.write_text(self._config(capabilities))
        self.process: subprocess.Popen[bytes] | None = None

    def _config(self, capabilities: str | None) -> str:
        d = self.dir
        for sub in ("run", "state", "mail"):
            (d / sub).mkdir(exist_ok=True)
        (d / "passwd").write_text(
            f"{USER}:{{PLAIN}}{PASSWORD}::::::\n{FEEDER}:{{PLAIN}}{FEEDER_PASSWORD}::::::\n"
        )
        if self.root:  # the package's users; the login process chrooted as it likes
            login, internal, mail = "dovenull", "dovecot", pwd.getpwnam("dovecot")
            chroot = ""
        else:  # everything as the current user, which cannot chroot
            mail, chroot = pwd.getpwuid(os.getuid()), "  chroot =\n"
            login = internal = mail.pw_name
        group = grp.getgrgid(mail.pw_gid).gr_name
        os.chown(d / "mail", mail.pw_uid, mail.pw_gid)
        tls = (
            f"ssl = yes\nssl_cert = <{d / 'cert.pem'}\nssl_key = <{d / 'key.pem'}\n"
            "disable_plaintext_auth = yes\n"
            if self.tls
            else "ssl = no\ndisable_plaintext_auth = no\n"
        )
        return (
            "protocols = imap\nlisten = 127.0.0.1\n"
            f"base_dir = {d / 'run'}\nstate_dir = {d / 'state'}\n"
            f"log_path = {d / 'dovecot.log'}\ninfo_log_path = {d / 'dovecot.log'}\n"
            f"default_login_user = {login}\ndefault_internal_user = {internal}\n"
            f"default_internal_group = {group}\n"
            f"first_valid_uid = {mail.pw_uid}\nfirst_valid_gid = {mail.pw_gid}\n"
            # XOAUTH2 checks the token as it would a password: enough to see it used.
            "auth_mechanisms = plain login xoauth2\n"
            f"{tls}"
            f"passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN {d / 'passwd'}\n}}\n"
            # Both users read and write the one Maildir.
            f"userdb {{\n  driver = static\n  args = uid={mail.pw_uid} gid={mail.pw_gid} "
            f"home={d / 'mail'}\n}}\n"
            "mail_location = maildir:~/Maildir\n"
            + (f"imap_capability = {capabilities}\n" if capabilities else "")
            + "service imap-login {\n"
            f"  inet_listener imap {{\n    port = {self.port}\n  }}\n"
            f"  inet_listener imaps {{\n    port = {self.tls_port if self.tls else 0}\n  }}\n"
            f"{chroot}}}\n" + ("service anvil {\n  chroot =\n}\n" if chroot else "")
        )

    def start(self) -> Dovecot:
        log = open(self.dir / "dovecot.stderr", "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(
            [str(DOVECOT), "-F", "-c", str(self.conf)],
            stdout=log,
            stderr=log,
            start_new_session=True,  # its children in its process group: stopped together
        )
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe,
            ):
                if probe.recv(100).startswith(b"* OK"):
                    return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"dovecot did not start: {self.log_tail()}")

    def stop(self) -> None:
        """Stop at once, as a crash would: SIGKILL to the master and all its processes (the
        master alone would leave them serving their clients for a while)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self.process = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until the children have let go of the port
            try:
                with socket.socket() as probe:
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Dovecot
                    probe.bind(("127.0.0.1", self.port))
                    break
            except OSError:
                time.sleep(0.05)

    def restart(self) -> None:
        self.stop()
        self.start()

    def kick(self, user: str = USER) -> bool:
        """Drop every connection of ``user`` (Dovecot ends their processes); whether any."""
        result = subprocess.run(
            [str(DOVEADM), "-c", str(self.conf), "kick", user], capture_output=True, timeout=30
        )
        return result.returncode == 0

    def connected(self, user: str = USER) -> bool:
        """Whether ``user`` has a connection open (its mail process runs)."""
        return bool(self.connections(user))

    def connections(self, user: str = USER) -> set[int]:
        """The pids of ``user``'s mail processes (``doveadm who`` lists them in brackets)."""
        result = subprocess.run(
            [str(DOVEADM), "-c", str(self.conf), "who", user], capture_output=True, timeout=30
        )
        pids: set[int] = set()
        for line in result.stdout.decode(errors="replace").splitlines():
            fields = line.split()
            if result.returncode != 0 or not fields or fields[0] != user:
                continue
            for bracketed in re.findall(r"\(([^)]*)\)", line)[:1]:
                pids.update(int(pid) for pid in re.findall(r"\d+", bracketed))
        return pids

    def url(self, tls: bool = True) -> str:
        if tls:
            return f"imaps://{USER}@127.0.0.1:{self.tls_port}/{FOLDER}"
        return f"imap://{USER}@127.0.0.1:{self.port}/{FOLDER}"

    def client(self, user: str = FEEDER, password: str = FEEDER_PASSWORD) -> Any:
        """A logged-in IMAP connection (over TLS when the server has it)."""
        if self.tls:
            context = ssl.create_default_context(cafile=str(self.ca_file))
            client = IMAPClient("127.0.0.1", self.tls_port, ssl_context=context, timeout=30)
        else:
            client = IMAPClient("127.0.0.1", self.port, ssl=False, timeout=30)
        client.login(user, password)
        return client

    def log_tail(self, lines: int = 20) -> str:
        path = self.dir / "dovecot.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        stderr = self.dir / "dovecot.stderr"
        text += stderr.read_text(errors="replace") if stderr.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def close(self) -> None:
        self.stop()
        if self.root:
            shutil.rmtree(self.dir, ignore_errors=True)


# --- a game stream through the mailbox, with forced disconnects ---------------------------

PLAYERS = (("alice", "secret1", "alice@example.org"), ("bob", "hunter22", "bob@example.org"))
# `pbmserv serve`, with the reader's first reconnection pause given as the first argument.
SERVE = (
    "import sys; import pbmserv.inbound.imap as imap; "
    "imap.BACKOFF_FIRST_SECONDS = float(sys.argv.pop(1)); "
    "from pbmserv.cli.main import main; sys.exit(main())"
)


@dataclass
class StreamFigures:
    """What a stream measured; latencies from APPEND to the reply reaching the relay."""

    moves: int
    disconnects: int
    restarts: int
    reconnections: int  # the reader's own count of failures (lines in its log)
    lost: int
    applied_twice: int
    answered_twice: int
    latencies: list[float]
    seconds: float

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies) or [float("nan")]
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    def line(self) -> str:
        return (
            f"moves {self.moves}, disconnects {self.disconnects} ({self.restarts} of them "
            f"server restarts; the reader reconnected after {self.reconnections} failures), "
            f"lost {self.lost}, applied twice {self.applied_twice}, answered twice "
            f"{self.answered_twice}; arrival to reply: median {self.percentile(0.5):.2f} s, "
            f"p95 {self.percentile(0.95):.2f} s, max {max(self.latencies, default=0):.2f} s; "
            f"{self.seconds:.0f} s in all"
        )


class TimedRelay:
    """An SMTP relay on 127.0.0.1 noting when each reply came, by the message it answers."""

    def __init__(self) -> None:
        self.replies: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()
        self.controller = Controller(self, hostname="127.0.0.1", port=free_port())

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.original_content or b"")
        answered = str(message.get("In-Reply-To", "")).strip().strip("<>")
        if answered and not message.get("Reply-To"):  # the reply to the sender, not board mail
            with self.lock:
                self.replies[answered].append(time.monotonic())
        return "250 OK"

    def answered(self, message_id: str) -> list[float]:
        with self.lock:
            return list(self.replies.get(message_id, []))


class Feeder:
    """The provider's delivery: APPENDs into the mailbox, again after any failure (a copy
    the server kept though the answer was lost is then there twice, as providers do)."""

    def __init__(self, dovecot: Dovecot) -> None:
        self.dovecot = dovecot
        self.client: Any = None

    def deliver(self, sender: str, subject: str) -> tuple[str, float]:
        """Deliver one message; its Message-ID and when the first attempt began."""
        message = EmailMessage()
        message["Return-Path"] = f"<{sender}>"
        message["From"], message["To"], message["Subject"] = sender, "pbmserv@localhost", subject
        message["Message-ID"] = make_msgid(domain="players.example")
        raw = message.as_bytes(policy=email.policy.SMTP)
        started = time.monotonic()
        for _ in range(100):
            try:
                if self.client is None:
                    self.client = self.dovecot.client()
                self.client.append(FOLDER, raw)
                return str(message["Message-ID"]).strip("<>"), started
            except Exception:
                with contextlib.suppress(Exception):
                    self.client.shutdown()
                self.client = None
                time.sleep(0.1)
        raise RuntimeError("could not deliver into the mailbox")


def chameleon_moves(rng: random.Random, count: int) -> list[str]:
    """Legal moves of one 26x26 Chameleon game, far from any win."""
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 26}, rng)
    texts = []
    for _ in range(count):
        move = rng.choice([m for m in game.legal_moves(state, state.ply % 2) if m != "swap"])
        texts.append(game.format_move(state, move))
        state = game.apply(state, move, rng)
    return texts


def play_stream(
    workdir: Path,
    db_url: str,
    moves: int = 300,
    disconnects: int = 100,
    boards: int = 10,
    restart_every: int = 20,
    backoff: float = 1.0,
    pace: float = 0.05,
    timeout: float = 300.0,
) -> StreamFigures:
    """Play ``moves`` Chameleon moves on ``boards`` boards by mail through `pbmserv serve
    --imap` while ``disconnects`` forced disconnects hit its mailbox connection (every
    ``restart_every``-th a restart of the whole IMAP server); then count what was lost."""
    import trustme

    began = time.monotonic()
    dovecot = Dovecot(workdir / "dovecot", ca=trustme.CA()).start()
    relay = TimedRelay()
    relay.controller.start()
    log_path = workdir / "serve.log"
    serve = None
    kicker = Kicker(dovecot, disconnects, restart_every)
    try:
        env = environment(db_url, workdir / "spool")
        env.update(
            PBMSERV_RELAY=f"127.0.0.1:{relay.controller.port}",
            PBMSERV_RELAY_TLS="none",
            PBMSERV_IMAP_PASSWORD=PASSWORD,
            SSL_CERT_FILE=str(dovecot.ca_file),
            PBMSERV_RATE_LIMIT="0",
            PBMSERV_FROM_RATE_LIMIT="0",
            PBMSERV_BOARD_PICTURES="false",
            PBMSERV_MAINTENANCE_INTERVAL_SECONDS="0",
            PBMSERV_RETRY_BASE_SECONDS="1",
            PBMSERV_RETRY_MAX_SECONDS="2",
        )
        with open(log_path, "ab") as log:
            serve = subprocess.Popen(
                [sys.executable, "-c", SERVE, str(backoff), "serve", "--imap", dovecot.url()],
                env=env,
                stderr=log,
            )
        feeder = Feeder(dovecot)
        setup = [
            feeder.deliver(address, f"signup {user} {password}")[0]
            for user, password, address in PLAYERS
        ]
        _wait_answered(relay, setup, timeout)
        setup = [
            feeder.deliver(PLAYERS[0][2], "chameleon challenge -size=26 alice bob")[0]
            for _ in range(boards)
        ]
        _wait_answered(relay, setup, timeout)
        plies = -(-moves // boards)
        rng = random.Random(1)
        games = [chameleon_moves(rng, plies) for _ in range(boards)]
        sent: list[tuple[str, float]] = []
        kicker.start()
        for ply in range(plies):
            user, password, address = PLAYERS[ply % 2]
            for board, texts in enumerate(games, start=1):
                if len(sent) < moves:
                    # The disconnects spread evenly over the stream, whatever their pace.
                    while kicker.is_alive() and kicker.done < len(sent) * disconnects // moves:
                        time.sleep(0.01)
                    line = f"chameleon move {board} {user} {password} {texts[ply]}"
                    sent.append(feeder.deliver(address, line))
                    time.sleep(pace)
        _wait_answered(relay, [mid for mid, _ in sent], timeout, ignore_timeout=True)
        kicker.finish(timeout)
        time.sleep(2)  # anything answered twice would be by now
        return _figures(db_url, relay, sent, kicker, log_path, time.monotonic() - began)
    finally:
        kicker.finish(0)
        if serve is not None:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(30)
            except subprocess.TimeoutExpired:
                serve.kill()
        relay.controller.stop()
        dovecot.close()


class Kicker(threading.Thread):
    """Forces ``count`` disconnects of the reader's connection, each a short random while
    after the reader is back: Dovecot kicks it, or (every ``restart_every``-th) restarts."""

    def __init__(self, dovecot: Dovecot, count: int, restart_every: int) -> None:
        super().__init__(daemon=True)
        self.dovecot, self.count, self.restart_every = dovecot, count, restart_every
        self.done, self.restarts = 0, 0
        self.stopping = threading.Event()
        self.rng = random.Random(2)

    def run(self) -> None:
        kicked: set[int] = set()
        while self.done < self.count and not self.stopping.is_set():
            # Only a connection the reader made since the last cut: a kicked process can
            # still be listed a moment under load, and kicking it again cuts nothing new.
            fresh = self.dovecot.connections() - kicked
            if not fresh:
                time.sleep(0.02)
                continue
            self.stopping.wait(self.rng.uniform(0.02, 0.3))
            kicked |= self.dovecot.connections()
            if self.restart_every and (self.done + 1) % self.restart_every == 0:
                self.dovecot.restart()
                self.restarts += 1
                self.done += 1
            elif self.dovecot.kick():
                self.done += 1

    def finish(self, timeout: float) -> None:
        if self.is_alive():
            self.join(timeout)
        self.stopping.set()
        if self.is_alive():
            self.join(30)


def _wait_answered(
    relay: TimedRelay, message_ids: list[str], timeout: float, ignore_timeout: bool = False
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(relay.answered(mid) for mid in message_ids):
            return
        time.sleep(0.05)
    if not ignore_timeout:
        missing = sum(1 for mid in message_ids if not relay.answered(mid))
        raise AssertionError(f"{missing} of {len(message_ids)} messages got no answer")


def _figures(
    db_url: str,
    relay: TimedRelay,
    sent: list[tuple[str, float]],
    kicker: Kicker,
    log_path: Path,
    seconds: float,
) -> StreamFigures:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            applied = Counter(
                str(mid).strip("<>")
                for mid in conn.scalars(select(MoveRow.message_id).where(MoveRow.kind == "move"))
            )
    finally:
        engine.dispose()
    latencies = []
    for mid, arrived in sent:
        replies = relay.answered(mid)
        if replies:
            latencies.append(max(0.0, replies[0] - arrived))
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    return StreamFigures(
        moves=len(sent),
        disconnects=kicker.done,
        restarts=kicker.restarts,
        reconnections=log.count("reconnecting in"),
        lost=sum(1 for mid, _ in sent if applied[mid] == 0),
        applied_twice=sum(1 for mid, _ in sent if applied[mid] > 1),
        answered_twice=sum(1 for mid, _ in sent if len(relay.answered(mid)) > 1),
        latencies=latencies,
        seconds=seconds,
    )
