"""Kill `pbmserv serve` with SIGKILL while it plays games by mail: is any accepted message lost,
any move applied twice, any mail sent twice? (issue 15)

Run ``python bench/security/crash_loop.py`` (24 kills), ``--quick`` (4 kills, 4 boards) or ``-k K``;
add ``--db postgresql+psycopg://postgres@127.0.0.1:5432/test`` for PostgreSQL (a private schema is
created in that database and dropped at the end).

It starts a relay sink that records every message's raw bytes, migrates a fresh database,
starts ``pbmserv serve`` on 127.0.0.1, signs players up and opens Chameleon boards by mail.
Then one client thread per board plays legal moves (drawn with a seeded RNG from the game
module itself, the board tracked locally): it sends a move, retrying as a mail server would
until it gets 250, and waits for the answer to that move before sending the next. Meanwhile the
server is killed with SIGKILL K times at random moments and restarted at once. At the end it
waits (bounded) until the inbox and outbox are empty and compares the moves table, the boards
and the relayed mail with what was sent. It prints:

- accepted (250): move messages the server acknowledged;
- lost: accepted but never applied (no move row carries its Message-ID);
- applied twice: a Message-ID on two move rows, or two rows for one ply of a board, or a board
  whose stored ply differs from the moves the bench played on it;
- duplicate mails at the relay: one Message-ID received twice; one In-Reply-To answered twice
  (under two Message-IDs); one board mail (recipient, subject, body) received twice. A kill
  may cost one mail sent again (the one the relay took just before it, not yet marked sent),
  never more: at most as many as the kills (issue 29);
- the number of kills.

The server runs with a 5-second delivery lease (``--lease``) instead of the default 120 s, so
that mail a killed server was sending is taken over quickly. Exit code 0 whatever the figures;
2 when the bench itself failed.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import hashlib
import random
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.rig import (  # noqa: E402
    Outgoing,
    RecordingRelay,
    Relayed,
    ScratchDatabase,
    ServerProcess,
    SmtpClient,
    count_tracebacks,
    free_port,
    mail_bytes,
    message_ids,
    parse_relayed,
    print_rows,
    wait_settled,
    workdir_for,
)
from pbmserv.games.chameleon import GAME  # noqa: E402

BOARD_SIZE = 26  # room for hundreds of moves without a win
PASSWORD = "crash-pw"
# What the answer to a move that was played says (templates/mail/sections/moved.txt.j2).
PLAYED = " you played "


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Play Chameleon by mail while killing the server; count lost and doubled "
        "moves and mail (issue 15).",
    )
    parser.add_argument("-k", "--kills", type=int, default=24, help="SIGKILLs (default 24)")
    parser.add_argument("--boards", type=int, default=12, help="boards played at once")
    parser.add_argument("--quick", action="store_true", help="4 kills on 4 boards")
    parser.add_argument("--seed", type=int, default=1, help="RNG seed (default 1)")
    parser.add_argument(
        "--gap",
        type=float,
        nargs=2,
        default=(1.0, 6.0),
        metavar=("MIN", "MAX"),
        help="seconds between a restart and the next kill, drawn uniformly (default 1 6)",
    )
    parser.add_argument("--max-moves", type=int, default=400, help="moves per board at most")
    parser.add_argument(
        "--db",
        help="sqlite:///FILE (a new file), or a PostgreSQL URL in which a scratch schema is "
        "created and dropped; default: SQLite in a temporary folder",
    )
    parser.add_argument("--lease", type=float, default=5, help="delivery lease of the server")
    parser.add_argument(
        "--reply-timeout", type=float, default=120, help="longest wait for a move's answer"
    )
    parser.add_argument(
        "--time-limit", type=float, default=900, help="stop playing after this many seconds"
    )
    parser.add_argument(
        "--settle-timeout", type=float, default=600, help="longest wait for an empty inbox/outbox"
    )
    parser.add_argument("--stall", type=float, default=60, help="give up after no progress")
    parser.add_argument("--keep", action="store_true", help="keep the work folder and database")
    args = parser.parse_args(argv)
    if args.quick:
        args.kills, args.boards = 4, 4
    return args


# --- mail in, answers out ---------------------------------------------------------------


@dataclass
class Delivery:
    """How getting one message accepted went."""

    accepted: bool
    attempts: int
    last: str
    failures: Counter[int] = field(default_factory=Counter)  # code of each failed attempt


def deliver(client: SmtpClient, message: Outgoing, deadline: float) -> Delivery:
    """Send until 250, as a mail server would: a refused connection, a reset or a 4xx is
    retried (the same bytes, so a copy already stored is recognised); a 5xx is final."""
    attempts = 0
    code, text = 0, ""
    failures: Counter[int] = Counter()
    while time.monotonic() < deadline:
        attempts += 1
        code, text = client.send(message)
        if code == 250:
            return Delivery(True, attempts, text, failures)
        failures[code] += 1
        if 500 <= code < 600:
            break
        time.sleep(0.1)
    return Delivery(False, attempts, f"{code} {text}", failures)


class Answers:
    """The relayed mail indexed by In-Reply-To, read from the relay as it grows."""

    def __init__(self, relay: RecordingRelay) -> None:
        self.relay = relay
        self.seen = 0
        self.by_parent: dict[str, list[Relayed]] = {}
        self.lock = threading.Lock()

    def _refresh(self) -> None:
        messages = self.relay.messages()
        for item in messages[self.seen :]:
            parsed = email.message_from_bytes(item.raw, policy=email.policy.compat32)
            for mid in message_ids(str(parsed.get("In-Reply-To", ""))):
                self.by_parent.setdefault(mid, []).append(item)
        self.seen = len(messages)

    def wait(self, mid: str, timeout: float) -> Relayed | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                self._refresh()
                found = self.by_parent.get(mid)
            if found:
                return found[0]
            time.sleep(0.05)
        return None


def body_text(raw: bytes) -> str:
    part = parse_relayed(raw).get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


# --- setting up -------------------------------------------------------------------------


def player(number: int) -> tuple[str, str]:
    """User id and address of player ``number``."""
    return f"cp{number}", f"cp{number}@players.test"


def setup_boards(port: int, answers: Answers, db: ScratchDatabase, boards: int) -> dict:
    """Sign up two players per board and open the boards by mail; return board -> seat users."""
    client = SmtpClient(port)
    lines = [(player(n)[1], f"signup {player(n)[0]} {PASSWORD}") for n in range(2 * boards)]
    lines += [
        (
            player(2 * b)[1],
            f"chameleon challenge -size={BOARD_SIZE} {player(2 * b)[0]} {player(2 * b + 1)[0]}",
        )
        for b in range(boards)
    ]
    for number, (sender, subject) in enumerate(lines):
        mid = f"<setup-{number}@bench.test>"
        outgoing = Outgoing(sender, mail_bytes(sender, subject, mid)[1])
        sent = deliver(client, outgoing, time.monotonic() + 60)
        if not sent.accepted or answers.wait(mid, 60) is None:
            raise RuntimeError(f"set-up message {subject!r} got no answer ({sent.last})")
    client.close()
    seats: dict[int, dict[int, str]] = {}
    for board, seat, userid in db.rows(
        "SELECT s.game_id, s.seat, u.userid FROM seats s JOIN users u ON u.id = s.user_id"
    ):
        seats.setdefault(int(board), {})[int(seat)] = str(userid)
    return seats


# --- playing ----------------------------------------------------------------------------


@dataclass
class Ledger:
    """Everything the movers did, shared by their threads."""

    sent: int = 0
    accepted: list[str] = field(default_factory=list)  # Message-IDs acknowledged with 250
    refused: int = 0
    retries: int = 0
    retry_codes: Counter[int] = field(default_factory=Counter)
    duplicates: int = 0  # 250 "already received": a retry of a message stored before
    rejected: list[str] = field(default_factory=list)  # answers that did not say "played"
    unanswered: list[str] = field(default_factory=list)
    played: dict[int, list[str]] = field(default_factory=dict)  # board -> move texts
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, mid: str, sent: Delivery) -> None:
        with self.lock:
            self.sent += 1
            self.retries += sent.attempts - 1
            self.retry_codes.update(sent.failures)
            self.duplicates += sent.accepted and "already" in sent.last
            if sent.accepted:
                self.accepted.append(mid)
            else:
                self.refused += 1


@dataclass
class Mover:
    """Plays one board: one legal move at a time, each after the answer to the last."""

    board: int
    users: dict[int, str]
    rng: random.Random
    state: Any = None

    def next_move(self) -> tuple[int, Any, str] | None:
        if GAME.outcome(self.state) is not None:
            return None
        seat = min(GAME.to_move(self.state).seats)
        moves = [m for m in GAME.legal_moves(self.state, seat) if m != "swap"]
        move = self.rng.choice(moves)
        return seat, move, GAME.format_move(self.state, move)

    def play(
        self,
        port: int,
        answers: Answers,
        ledger: Ledger,
        stop: threading.Event,
        args: argparse.Namespace,
    ) -> None:
        self.state = GAME.new_game(GAME.validate_options({"size": str(BOARD_SIZE)}, 2), self.rng)
        client = SmtpClient(port, timeout=30)
        ledger.played[self.board] = []
        try:
            for ply in range(args.max_moves):
                chosen = self.next_move()
                if stop.is_set() or chosen is None:
                    return
                seat, move, text = chosen
                if not self._send(client, answers, ledger, ply, seat, text, args):
                    return
                self.state = GAME.apply(self.state, move, self.rng)
                ledger.played[self.board].append(text)
        finally:
            client.close()

    def _send(
        self,
        client: SmtpClient,
        answers: Answers,
        ledger: Ledger,
        ply: int,
        seat: int,
        text: str,
        args: argparse.Namespace,
    ) -> bool:
        userid = self.users[seat]
        sender = f"{userid}@players.test"
        mid = f"<move-{self.board}-{ply}.{args.seed}@bench.test>"
        subject = f"chameleon move {self.board} {userid} {PASSWORD} {text}"
        outgoing = Outgoing(sender, mail_bytes(sender, subject, mid)[1])
        sent = deliver(client, outgoing, time.monotonic() + args.reply_timeout)
        ledger.note(mid, sent)
        if not sent.accepted:
            return False
        answer = answers.wait(mid, args.reply_timeout)
        if answer is None:
            ledger.unanswered.append(mid)
            return False
        if PLAYED not in body_text(answer.raw):
            ledger.rejected.append(mid)
            return False
        return True


class Killer:
    """Kills the server with SIGKILL ``count`` times at random moments, restarting it each time."""

    def __init__(self, server: ServerProcess, count: int, gap: tuple[float, float], seed: int):
        self.server = server
        self.count = count
        self.gap = gap
        self.rng = random.Random(f"kill:{seed}")
        self.kills = 0
        self.unexpected_exits = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while self.kills < self.count and not self.stop.wait(self.rng.uniform(*self.gap)):
            if not self.server.alive():
                self.unexpected_exits += 1
            self.server.kill()
            self.kills += 1
            time.sleep(self.rng.uniform(0, 0.3))  # clients meet a closed port for a moment
            self._restart()
            print(f"  ... kill {self.kills} of {self.count}", file=sys.stderr, flush=True)

    def _restart(self) -> None:
        for _attempt in range(3):
            try:
                self.server.start()
                return
            except RuntimeError as error:  # reported; the movers' waits are bounded anyway
                print(f"  !!! restart failed: {error}", file=sys.stderr, flush=True)
                self.unexpected_exits += 1


def play_all(
    port: int, answers: Answers, seats: dict, killer: Killer, args: argparse.Namespace
) -> Ledger:
    ledger = Ledger()
    stop = threading.Event()
    movers = [
        Mover(board, users, random.Random(f"{args.seed}:{board}"))
        for board, users in sorted(seats.items())
    ]
    threads = [
        threading.Thread(target=m.play, args=(port, answers, ledger, stop, args), daemon=True)
        for m in movers
    ]
    for thread in threads:
        thread.start()
    killer.thread.start()
    deadline = time.monotonic() + args.time_limit
    while killer.thread.is_alive() and time.monotonic() < deadline:
        killer.thread.join(1)
    killer.stop.set()
    killer.thread.join(120)
    stop.set()
    for thread in threads:
        thread.join(max(1.0, args.reply_timeout + 30))
    return ledger


# --- checking ---------------------------------------------------------------------------


@dataclass
class Check:
    lost: int
    applied_twice: int
    boards_differing: int
    dup_message_id: int
    dup_answers: int
    dup_boards: int
    relayed: int


def check(db: ScratchDatabase, ledger: Ledger, relayed: list[Relayed]) -> Check:
    rows = db.rows("SELECT message_id, count(*) FROM moves GROUP BY message_id")
    per_mid = {str(mid): int(n) for mid, n in rows if mid is not None}
    lost = sum(1 for mid in ledger.accepted if per_mid.get(mid, 0) == 0)
    twice = sum(n - 1 for mid, n in per_mid.items() if mid.startswith("<move-") and n > 1)
    doubled = db.scalar(
        "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM moves "
        "GROUP BY game_id, ply HAVING count(*) > 1) AS doubled"
    )
    twice += int(str(doubled or 0))
    differing = boards_differing(db, ledger)
    return Check(lost, twice, differing, *duplicates(relayed), relayed=len(relayed))


def boards_differing(db: ScratchDatabase, ledger: Ledger) -> int:
    """Boards whose stored history is not exactly the moves the bench had answered "played"."""
    history: dict[int, list[str]] = {}
    for board, text in db.rows("SELECT game_id, text FROM moves ORDER BY game_id, ply, id"):
        history.setdefault(int(board), []).append(str(text))
    plies = {int(b): int(p) for b, p in db.rows("SELECT id, ply FROM games")}
    differing = 0
    for board, texts in ledger.played.items():
        stored = history.get(board, [])
        # The last move sent may be applied without its answer having come (bench stopped).
        prefix_ok = stored[: len(texts)] == texts and len(stored) <= len(texts) + 1
        if not prefix_ok or plies.get(board) != len(stored):
            differing += 1
    return differing


def duplicates(relayed: list[Relayed]) -> tuple[int, int, int]:
    """Extra copies: by Message-ID; answers to one message under new Message-IDs; board mails
    with the same recipient, subject and body under new Message-IDs."""
    by_mid: Counter[str] = Counter()
    answers: dict[str, set[str]] = {}
    boards: dict[tuple, set[str]] = {}
    for item in relayed:
        message = email.message_from_bytes(item.raw, policy=email.policy.compat32)
        mid = str(message.get("Message-ID", ""))
        by_mid[mid] += 1
        parents = message_ids(str(message.get("In-Reply-To", "")))
        if parents:
            answers.setdefault(parents[0], set()).add(mid)
        else:
            body = hashlib.sha256(str(message.get_payload()).encode()).hexdigest()
            key = (item.rcpt_tos, str(message.get("Subject", "")), body)
            boards.setdefault(key, set()).add(mid)
    return (
        sum(n - 1 for n in by_mid.values()),
        sum(len(mids) - 1 for mids in answers.values()),
        sum(len(mids) - 1 for mids in boards.values()),
    )


# --- running ----------------------------------------------------------------------------


def retry_breakdown(codes: Counter[int]) -> str:
    names = {-1: "refused/reset", -2: "timeout"}
    return ", ".join(f"{names.get(c, str(c))} x{n}" for c, n in sorted(codes.items())) or "-"


def print_report(title: str, ledger: Ledger, result: Check, killer: Killer, extra: dict) -> None:
    rows = [
        ("kills (SIGKILL)", str(killer.kills), ""),
        ("move messages sent", str(ledger.sent), ""),
        ("accepted (250)", str(len(ledger.accepted)), ""),
        ("never accepted (5xx or gave up)", str(ledger.refused), "must be 0"),
        ("SMTP retries (closed port, reset, 4xx)", str(ledger.retries), ""),
        ("accepted as a copy already stored", str(ledger.duplicates), ""),
        ("lost (accepted, never applied)", str(result.lost), "must be 0"),
        ("applied twice", str(result.applied_twice), "must be 0"),
        ("boards whose history differs", str(result.boards_differing), "must be 0"),
        ("moves answered with an error", str(len(ledger.rejected)), "must be 0"),
        ("moves never answered", str(len(ledger.unanswered)), "must be 0"),
        ("inbox pending / failed at the end", extra["inbox"], "must be 0"),
        ("outbox pending / failed at the end", extra["outbox"], "must be 0"),
        ("mails at the relay", str(result.relayed), ""),
        ("duplicate mails (same Message-ID)", str(result.dup_message_id), "at most the kills"),
        ("duplicate answers (same In-Reply-To)", str(result.dup_answers), "must be 0"),
        ("duplicate board mails", str(result.dup_boards), "must be 0"),
        ("server exits not caused by a kill", str(killer.unexpected_exits), "must be 0"),
        ("tracebacks in the server log", str(extra["tracebacks"]), ""),
    ]
    print_rows(title, rows, 10)
    print(f"  SMTP retries by outcome: {retry_breakdown(ledger.retry_codes)}")
    print(f"  wait for the inbox and outbox: {extra['settled']}")


def run(args: argparse.Namespace, workdir: Path) -> tuple[Ledger, Check, Killer, dict]:
    db = ScratchDatabase.create(args.db, workdir)
    relay = RecordingRelay().start()
    port = free_port()
    env = {
        "PBMSERV_DELIVERY_LEASE_SECONDS": str(args.lease),
    }
    server = ServerProcess(
        db.url, relay.address, workdir, port=port, env=env, poll_seconds=0.5, rate_limit=0
    )
    try:
        db.upgrade()
        server.start()
        answers = Answers(relay)
        print(f"setting up {args.boards} boards ({db.kind})", file=sys.stderr, flush=True)
        seats = setup_boards(port, answers, db, args.boards)
        killer = Killer(server, args.kills, tuple(args.gap), args.seed)
        print(f"playing while killing the server {args.kills} times", file=sys.stderr, flush=True)
        ledger = play_all(port, answers, seats, killer, args)
        if not server.alive():
            server.start()
        print("waiting for the server to process and deliver", file=sys.stderr, flush=True)
        settled = wait_settled(db, args.settle_timeout, args.stall)
        time.sleep(1)
        inbox, outbox = db.status_counts("inbox"), db.status_counts("outbox")
        server.stop()
        extra = {
            "inbox": f"{inbox.get('pending', 0)} / {inbox.get('failed', 0)}",
            "outbox": f"{outbox.get('pending', 0)} / {outbox.get('failed', 0)}",
            "tracebacks": count_tracebacks(server.log_path),
            "settled": f"{settled.reason} ({settled.waited:.0f} s)",
        }
        return ledger, check(db, ledger, relay.messages()), killer, extra
    finally:
        server.stop()
        relay.stop()
        if not args.keep:
            db.drop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    try:
        with workdir_for("pbmcrash-", args.keep) as workdir:
            ledger, result, killer, extra = run(args, workdir)
    except Exception as error:  # the bench itself failed
        print(f"crash_loop: the bench failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    kind = "PostgreSQL" if args.db and not args.db.startswith("sqlite") else "SQLite"
    title = (
        f"crash_loop: {args.boards} boards, {args.kills} kills planned, seed {args.seed}, "
        f"{kind}, {time.monotonic() - started:.0f} s"
    )
    print_report(title, ledger, result, killer, extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
