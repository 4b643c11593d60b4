"""Hostile mail against a real `pbmserv serve`: can a message stop the server, forge mail, or
leak a password? (issue 15)

Run ``python bench/security/fuzz_mail.py`` (20,000 messages), ``--quick`` (500) or ``-n N``; add
``--db postgresql+psycopg://postgres@127.0.0.1:5432/test`` for PostgreSQL (a private schema is
created in that database and dropped at the end). It starts a relay sink that records every
message's raw bytes, migrates a fresh database (``pbmserv db upgrade``), starts ``pbmserv serve``
on 127.0.0.1, and sends N messages from a seeded corpus (bench/rig/hostile_mail.py: encoded-word
From/Subject/Message-ID that decode to CR/LF, NUL and control characters, huge and bare-LF
headers, deep and wide multiparts, random bytes, bogus charsets and transfer encodings, unicode
addresses, commands with injected text, accounts with hostile addresses, bounces, oversize mail
and about one good message in twelve) over SMTP from several client threads. Then it waits,
bounded, until the inbox and the outbox have nothing pending, and prints a table. A server that
exits is counted and restarted. ``--server 127.0.0.1:PORT --db URL --relay-port P`` uses a
running server instead (one that relays to 127.0.0.1:P).

That corpus phase runs its server with ``confirm_addresses`` off (its good senders are
strangers). Then an abuse phase (bench/rig/abuse.py, issue 29; ``--abuse-only`` runs it alone,
``--no-abuse`` leaves it out) sends floods, fan-out and forged mail to a second server on a fresh
database, with confirmation on and trusting the MTA ``mx.bench.test``, and prints a second table.

Every figure marked "must be 0" should be 0; quarantined messages (inbox status ``failed``) are
allowed. The exit code is 0 whatever the figures; 2 when the bench itself failed.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.rig import (  # noqa: E402
    SERVER_ADDRESS,
    RecordingRelay,
    Relayed,
    ScratchDatabase,
    ServerProcess,
    Settled,
    SmtpClient,
    count_tracebacks,
    free_port,
    header_text,
    message_ids,
    parse_host_port,
    parse_relayed,
    print_rows,
    vm_hwm_kb,
    wait_settled,
    workdir_for,
)
from bench.rig.abuse import MX, AbuseFigures, abuse_details, abuse_rows, run_abuse  # noqa: E402
from bench.rig.hostile_mail import KINDS, PASSWORD_TOKEN, Case, build_case  # noqa: E402

QUICK_COUNT = 500
DEFAULT_COUNT = 20_000
MAX_RESTARTS = 20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Send hostile mail to pbmserv and count what went wrong (issue 15).",
    )
    parser.add_argument("-n", "--count", type=int, default=DEFAULT_COUNT, help="messages to send")
    parser.add_argument("--quick", action="store_true", help=f"send {QUICK_COUNT} messages")
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--threads", type=int, default=8, help="SMTP client threads")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[*KINDS, "oversize"],
        metavar="KIND",
        help="leave this kind of message out (repeatable), e.g. one known to stop the server; "
        f"kinds: {', '.join(KINDS)}, oversize",
    )
    parser.add_argument(
        "--db",
        help="sqlite:///FILE (a new file), or a PostgreSQL URL in which a scratch schema is "
        "created and dropped; default: SQLite in a temporary folder",
    )
    parser.add_argument("--server", help="use a running server at 127.0.0.1:PORT (needs --db)")
    parser.add_argument(
        "--relay-port", type=int, default=0, help="port of the relay sink (with --server)"
    )
    parser.add_argument("--server-pid", type=int, help="with --server: its PID (memory, exits)")
    parser.add_argument("--server-log", type=Path, help="with --server: its log file")
    parser.add_argument(
        "--send-timeout", type=float, default=1200, help="stop sending after this many seconds"
    )
    parser.add_argument(
        "--settle-timeout",
        type=float,
        default=1800,
        help="longest wait for the inbox and outbox to empty",
    )
    parser.add_argument(
        "--stall", type=float, default=60, help="stop waiting after this long without progress"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder and database")
    phases = parser.add_mutually_exclusive_group()
    phases.add_argument(
        "--abuse-only", action="store_true", help="run only the abuse phase (issue 29)"
    )
    phases.add_argument("--no-abuse", action="store_true", help="leave the abuse phase out")
    args = parser.parse_args(argv)
    if args.quick:
        args.count = QUICK_COUNT
    if args.server and not args.db:
        parser.error("--server needs --db, the database that server uses")
    return args


# --- sending ----------------------------------------------------------------------------


@dataclass
class SendStats:
    """What the SMTP conversations gave, shared by the client threads."""

    sent: int = 0
    codes: Counter[int] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    kind_of: dict[int, str] = field(default_factory=dict)  # corpus index -> kind
    good_accepted: dict[str, str] = field(default_factory=dict)  # Message-ID -> sender
    good_refused: int = 0
    duplicates: int = 0  # 250 "already received": a copy of a message stored before
    owners: dict[str, str] = field(default_factory=dict)  # corpus password -> its sender
    next_index: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, count: int) -> int | None:
        with self.lock:
            if self.next_index >= count:
                return None
            self.next_index += 1
            return self.next_index - 1

    def record(self, case: Case, code: int, text: str) -> None:
        with self.lock:
            self.sent += 1
            self.codes[code] += 1
            self.duplicates += code == 250 and "already" in text
            self.kinds[case.kind] += 1
            self.kind_of[case.index] = case.kind
            for password in _TOKEN.findall(case.outgoing.raw.decode("utf-8", "replace")):
                self.owners[password] = case.outgoing.envelope_from.lower()
            if case.good_id is None:
                return
            if code == 250:
                self.good_accepted[case.good_id] = case.good_sender or ""
            else:
                self.good_refused += 1


def send_corpus(port: int, args: argparse.Namespace) -> SendStats:
    """Send the corpus from ``args.threads`` threads; bounded by count and by time."""
    stats = SendStats()
    deadline = time.monotonic() + args.send_timeout

    def worker() -> None:
        client = SmtpClient(port)
        try:
            while time.monotonic() < deadline:
                index = stats.take(args.count)
                if index is None:
                    return
                case = build_case(args.seed, index, frozenset(args.skip))
                code, text = client.send(case.outgoing)
                stats.record(case, code, text)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        next(t for t in threads if t.is_alive()).join(10)
        print(f"  ... {stats.sent} of {args.count} sent", file=sys.stderr, flush=True)
    return stats


# --- watching the server ----------------------------------------------------------------


class Watchdog:
    """Samples the server's peak memory; counts and restarts a server that exited."""

    def __init__(self, server: ServerProcess | None, pid: int | None) -> None:
        self.server = server
        self.pid = pid
        self.crashes = 0
        self.peak_kb = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Watchdog:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(10)
        self.tick()

    def tick(self) -> None:
        if self.server is not None:
            self.peak_kb = max(self.peak_kb, self.server.sample_memory())
        elif self.pid is not None:
            self.peak_kb = max(self.peak_kb, vm_hwm_kb(self.pid))

    def _restart(self) -> None:
        try:
            self.server.start()  # type: ignore[union-attr]
        except RuntimeError as error:  # counted again at the next look if it stays down
            print(f"  !!! restart failed: {error}", file=sys.stderr, flush=True)

    def _run(self) -> None:
        while not self.stopping.wait(0.5):
            self.tick()
            if self.server is not None and not self.server.alive() and not self.stopping.is_set():
                self.crashes += 1
                print("  !!! the server exited; restarting it", file=sys.stderr, flush=True)
                if self.crashes <= MAX_RESTARTS:
                    self._restart()
            elif self.pid is not None and not Path(f"/proc/{self.pid}").exists():
                self.crashes = 1  # a server we did not start cannot be restarted


# --- auditing what reached the relay ----------------------------------------------------


def expected_headers() -> frozenset[str]:
    """The header names the server's build_message writes (with and without threading, and
    with a board's reply address)."""
    from pbmserv.config import Settings
    from pbmserv.outbound.compose import build_message

    names: set[str] = set()
    settings = Settings(address=SERVER_ADDRESS)
    for body, reply in (("ascii", True), ("\u00e9" + "x" * 1200, False)):
        message = build_message(
            settings=settings,
            to="someone@example.org",
            subject="s",
            body=body,
            now=datetime.now(UTC),
            auto_submitted="auto-replied",
            in_reply_to="<a@example.org>" if reply else None,
            references=["<b@example.org>"] if reply else (),
            reply_to="pbmserv+b1-s0-abcdefghijklmnop@example.org" if reply else None,
        )
        head = message.raw.split(b"\n\n", 1)[0].decode("utf-8")
        names.update(line.split(":", 1)[0].lower() for line in head.split("\n") if line[:1].strip())
    return frozenset(names)


_FIELD_LINE = re.compile(rb"[!-9;-~]+:")
_TOKEN = re.compile(PASSWORD_TOKEN)


@dataclass
class RelayAudit:
    relayed: int = 0
    injected: int = 0  # unknown, repeated or malformed header lines, bare CR/LF in headers
    crlf_to_subject: int = 0
    unexpected_names: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)  # In-Reply-To ids
    answered_to: dict[str, set[str]] = field(default_factory=dict)
    passwords_to_others: int = 0
    passwords_to_sender: int = 0
    flagged: list[bytes] = field(default_factory=list)  # raw mails counted in a "must be 0"
    flagged_kinds: Counter[str] = field(default_factory=Counter)  # the corpus kind answered


# Headers every mail of the server has: one missing means the header block ended early.
_REQUIRED = ("from", "to", "subject", "date", "message-id")


def header_block_problems(raw: bytes, names: Counter[str]) -> list[str]:
    """Problems of the raw header block: lines that are neither a field nor a continuation,
    CR or LF that do not end a line, and required headers missing (a forged early end)."""
    end = raw.find(b"\r\n\r\n")
    block = raw[: end if end >= 0 else len(raw)]
    problems = [f"missing {name}" for name in _REQUIRED if names[name] == 0]
    for line in block.split(b"\r\n"):
        if b"\r" in line or b"\n" in line:
            problems.append("bare CR/LF in a header")
        elif line[:1] not in (b" ", b"\t") and not _FIELD_LINE.match(line):
            problems.append(f"malformed header line {line[:40]!r}")
    return problems


_CORPUS_ID = re.compile(rb"(?:fuzz|good)-(\d+)\.\d+@bench\.test")
_CORPUS_ADDRESS = re.compile(r"^[a-z]+(\d+)b?@(?:hostile|good)\.test$")


def corpus_index(item: Relayed) -> int | None:
    """The corpus message a relayed mail answers (by its threading ids or its recipient)."""
    end = item.raw.find(b"\r\n\r\n")
    found = _CORPUS_ID.search(item.raw[: end if end >= 0 else len(item.raw)])
    if found:
        return int(found.group(1))
    for rcpt in item.rcpt_tos:
        matched = _CORPUS_ADDRESS.match(rcpt.lower())
        if matched:
            return int(matched.group(1))
    return None


def _texts(message: email.message.Message) -> str:
    texts = []
    for part in message.walk():
        if part.is_multipart():
            continue
        try:
            texts.append(str(part.get_content()))  # type: ignore[attr-defined]
        except Exception:
            texts.append(str(part.get_payload()))
    return "\n".join(texts)


def audit_one(item: Relayed, expected: frozenset[str], audit: RelayAudit, stats: SendStats) -> None:
    audit.relayed += 1
    loose = email.message_from_bytes(item.raw, policy=email.policy.compat32)
    names = Counter(name.lower() for name in loose)
    unexpected = [n for n in names if n not in expected] + [n for n, c in names.items() if c > 1]
    problems = header_block_problems(item.raw, names)
    audit.unexpected_names.update(unexpected + problems)
    flagged = bool(unexpected or problems)
    audit.injected += flagged
    strict = parse_relayed(item.raw)
    if any(ch in header_text(strict, h) for h in ("To", "Subject") for ch in "\r\n"):
        audit.crlf_to_subject += 1
        flagged = True
    for mid in message_ids(str(loose.get("In-Reply-To", ""))):
        audit.answered[mid] += 1
        audit.answered_to.setdefault(mid, set()).update(r.lower() for r in item.rcpt_tos)
    found = set(_TOKEN.findall(item.raw.decode("utf-8", "replace") + _texts(strict)))
    for password in found:
        owner = stats.owners.get(password)
        if owner is not None and {owner} == {r.lower() for r in item.rcpt_tos}:
            audit.passwords_to_sender += 1
        else:
            audit.passwords_to_others += 1
            flagged = True
    if flagged:
        audit.flagged.append(item.raw)
        index = corpus_index(item)
        audit.flagged_kinds[stats.kind_of.get(index, "?") if index is not None else "?"] += 1


def audit_relay(messages: list[Relayed], stats: SendStats) -> RelayAudit:
    expected = expected_headers()
    audit = RelayAudit()
    for item in messages:
        audit_one(item, expected, audit, stats)
    return audit


def save_flagged(audit: RelayAudit, folder: Path) -> None:
    """Write each relayed mail that a "must be 0" figure counts, for a closer look."""
    folder.mkdir(exist_ok=True)
    for number, raw in enumerate(audit.flagged, start=1):
        (folder / f"{number:05d}.eml").write_bytes(raw)


def passwords_in_log(log_path: Path | None) -> int:
    if log_path is None or not log_path.exists():
        return 0
    return len(set(_TOKEN.findall(log_path.read_bytes().decode("utf-8", "replace"))))


# --- the report -------------------------------------------------------------------------


@dataclass
class Figures:
    stats: SendStats
    inbox: dict[str, int]
    outbox: dict[str, int]
    settled: Settled
    audit: RelayAudit
    crashes: int | None
    tracebacks: int | None
    log_passwords: int | None
    peak_kb: int | None


def unanswered_good(stats: SendStats, audit: RelayAudit) -> tuple[int, int]:
    """Good messages accepted but never answered; answered at another address."""
    missing = [mid for mid in stats.good_accepted if audit.answered[mid] == 0]
    wrong = [
        mid
        for mid, sender in stats.good_accepted.items()
        if audit.answered[mid] and sender.lower() not in audit.answered_to.get(mid, set())
    ]
    return len(missing), len(wrong)


def print_report(title: str, f: Figures) -> None:
    stats, audit = f.stats, f.audit
    refused = {code: n for code, n in sorted(stats.codes.items()) if code != 250}
    missing, wrong = unanswered_good(stats, audit)
    good_total = len(stats.good_accepted) + stats.good_refused

    def na(value: int | None) -> str:
        return "n/a" if value is None else str(value)

    rows: list[tuple[str, str, str]] = [
        ("sent", str(stats.sent), ""),
        ("accepted (250)", str(stats.codes[250]), ""),
        ("  of which copies already stored", str(stats.duplicates), ""),
        *[
            (f"refused {code}" if code > 0 else f"connection failed ({code})", str(n), "")
            for code, n in refused.items()
        ],
        ("processed (inbox done)", str(f.inbox.get("done", 0)), ""),
        ("ignored (bounces, auto-replies)", str(f.inbox.get("ignored", 0)), ""),
        ("quarantined (inbox failed)", str(f.inbox.get("failed", 0)), "allowed"),
        ("still pending in the inbox", str(f.inbox.get("pending", 0)), "must be 0"),
        (
            "outbox pending / failed",
            f"{f.outbox.get('pending', 0)} / {f.outbox.get('failed', 0)}",
            "must be 0",
        ),
        ("good messages refused", f"{stats.good_refused} of {good_total}", "must be 0"),
        ("good messages unanswered", f"{missing} of {len(stats.good_accepted)}", "must be 0"),
        ("good answers sent elsewhere", str(wrong), "must be 0"),
        ("server crashes (exits)", na(f.crashes), "must be 0"),
        ("mails at the relay", str(audit.relayed), ""),
        ("  with injected headers", str(audit.injected), "must be 0"),
        ("  with CR/LF in To or Subject", str(audit.crlf_to_subject), "must be 0"),
        ("  with a password, to another address", str(audit.passwords_to_others), "must be 0"),
        ("  with a password, back to its sender", str(audit.passwords_to_sender), "(echo)"),
        ("passwords in the server log", na(f.log_passwords), "must be 0"),
        ("tracebacks in the server log", na(f.tracebacks), "must be 0"),
        (
            "peak server memory (VmHWM)",
            "n/a" if not f.peak_kb else f"{f.peak_kb / 1024:.0f} MB",
            "",
        ),
    ]
    print_rows(title, rows, 14)
    print(f"  wait for the inbox and outbox: {f.settled.reason} ({f.settled.waited:.0f} s)")
    if audit.unexpected_names:
        top = ", ".join(f"{name} x{n}" for name, n in audit.unexpected_names.most_common(8))
        print(f"  injected or broken header lines: {top}")
    if audit.flagged_kinds:
        kinds = ", ".join(f"{kind} x{n}" for kind, n in audit.flagged_kinds.most_common())
        print(f"  flagged mails answer these corpus kinds: {kinds}")


# --- running ----------------------------------------------------------------------------


def inbox_counts(db: ScratchDatabase, since_id: int) -> dict[str, int]:
    rows = db.rows(
        "SELECT status, count(*) FROM inbox WHERE id > :since GROUP BY status", since=since_id
    )
    return {str(s): int(n) for s, n in rows}


def run(args: argparse.Namespace, workdir: Path) -> Figures:
    db = ScratchDatabase.create(args.db, workdir) if not args.server else ScratchDatabase(args.db)
    relay = RecordingRelay(args.relay_port).start()
    server: ServerProcess | None = None
    try:
        if args.server:
            port = parse_host_port(args.server)[1]
        else:
            db.upgrade()
            port = free_port()
            # This phase tests parsing, and its good senders are strangers: a private server
            # (BENCH_ENV).
            server = ServerProcess(
                db.url, relay.address, workdir, port=port, poll_seconds=0.5, rate_limit=0
            )
            server.start()
        since = int(db.scalar("SELECT coalesce(max(id), 0) FROM inbox") or 0)
        watchdog = Watchdog(server, args.server_pid).start()
        print(f"sending {args.count} messages ({db.kind}, seed {args.seed})", file=sys.stderr)
        stats = send_corpus(port, args)
        print("waiting for the server to process and deliver", file=sys.stderr, flush=True)
        settled = wait_settled(db, args.settle_timeout, args.stall, on_tick=watchdog.tick)
        time.sleep(1)  # the last deliveries' relay conversations finish
        watchdog.stop()
        inbox, outbox = inbox_counts(db, since), db.status_counts("outbox")
        log_path = server.log_path if server else args.server_log
        if server is not None:
            server.stop()
        audit = audit_relay(relay.messages(), stats)
        if args.keep:
            save_flagged(audit, workdir / "flagged")
        known = server is not None or args.server_pid is not None
        return Figures(
            stats=stats,
            inbox=inbox,
            outbox=outbox,
            settled=settled,
            audit=audit,
            crashes=watchdog.crashes if known else None,
            tracebacks=count_tracebacks(log_path) if log_path else None,
            log_passwords=passwords_in_log(log_path) if log_path else None,
            peak_kb=watchdog.peak_kb or None,
        )
    finally:
        if server is not None:
            server.stop()
        relay.stop()
        if not args.keep and not args.server:
            db.drop()


def print_abuse_report(title: str, figures: AbuseFigures) -> None:
    rows = abuse_rows(figures)
    print_rows(title, rows, 14)
    for line in abuse_details(figures):
        print(f"  {line}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    kind = "PostgreSQL" if args.db and not args.db.startswith("sqlite") else "SQLite"
    if not args.abuse_only:
        started = time.monotonic()
        try:
            with workdir_for("pbmfuzz-", args.keep) as workdir:
                figures = run(args, workdir)
        except Exception as error:  # the bench itself failed: say so, apart from the figures
            print(f"fuzz_mail: the bench failed: {type(error).__name__}: {error}", file=sys.stderr)
            return 2
        skipped = f", without {' '.join(args.skip)}" if args.skip else ""
        title = (
            f"fuzz_mail: {args.count} messages, seed {args.seed}{skipped}, {args.threads} "
            f"threads, {kind}, {time.monotonic() - started:.0f} s"
        )
        print_report(title, figures)
    if args.no_abuse:
        return 0
    started = time.monotonic()
    try:
        with workdir_for("pbmabuse-", args.keep) as workdir:
            abuse = run_abuse(args.db, workdir, quick=args.quick, keep=args.keep)
    except Exception as error:
        print(
            f"fuzz_mail: the abuse phase failed: {type(error).__name__}: {error}", file=sys.stderr
        )
        return 2
    title = (
        f"fuzz_mail abuse phase (issue 29): confirm_addresses on, trusting {MX}, {kind}, "
        f"{time.monotonic() - started:.0f} s"
    )
    print_abuse_report(title, abuse)
    return 0


if __name__ == "__main__":
    sys.exit(main())
