"""The abuse phase of bench/security/fuzz_mail.py (issue 29): can a stranger use the server to mail
other people, fan one message out to many, or forge an owner's mail?

A second `pbmserv serve` on a fresh database, as it ships (``confirm_addresses`` on) and
trusting the receiving MTA ``mx.bench.test``, relays to a recording relay. Real SMTP only. Every
user signs up and confirms their address by replying to the confirmation mail the relay got, as
a person would; their mail carries the MTA's headers on top (its Authentication-Results saying
DMARC passed, then its Received). Then the attacker (mallory@evil.test, a confirmed account)
sends:

1. sign-up floods in victims' names (30 ``signup`` lines a message, many messages);
2. ``message`` fan-out naming 20 and 10 users, and a flood of one user over 10 messages;
3. a board with 20 would-be observers, 30 ``chat`` lines in one message, a 600-byte move;
4. 30 ``email`` lines moving mallory's mail to 30 victims;
6. replies to bob's seat address, From bob, with forged Authentication-Results (below the
   MTA's Received, in a comment or a quoted string, missing, ``dkim=pass header.d=test``);
5. alice's From with mallory's envelope guessing alice's password (no Authentication-Results,
   a forged pass below the MTA's Received, duplicated), then the real alice changes her
   password.

The figures come from the relay's records and the database.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

from bench.rig import (
    SERVER_ADDRESS,
    Outgoing,
    RecordingRelay,
    Relayed,
    ScratchDatabase,
    ServerProcess,
    SmtpClient,
    count_tracebacks,
    free_port,
    header_text,
    parse_relayed,
    wait_settled,
)

MX = "mx.bench.test"
USERS_DOMAIN = "ex.test"
MALLORY = "mallory@evil.test"
MALLORY_PW = "pw-mallory1"
CONFIRM_SUBJECT = "pbmserv: may we send game mail to this address?"
MAX_MAILS_PER_MESSAGE = 25  # the server's default cap (deploy/pbmserv.toml)
SPAM = "Cheap pills at http://spam.example/buy"


def address(name: str) -> str:
    return MALLORY if name == "mallory" else f"{name}@{USERS_DOMAIN}"


def password(name: str) -> str:
    return f"pw-{name}1"


def received(domain: str) -> str:
    """The Received header the receiving MTA writes on top of what came in."""
    return (
        f"Received: from mail.{domain} (mail.{domain} [192.0.2.25]) by {MX} (Postfix) "
        f"with ESMTPS id {uuid.uuid4().hex[:10].upper()}; {formatdate()}"
    )


def mta_says(domain: str, dmarc: str = "pass") -> str:
    if dmarc == "pass":
        return (
            f"Authentication-Results: {MX}; dkim=pass header.d={domain} header.s=mail; "
            f"spf=pass smtp.mailfrom={domain}; dmarc=pass header.from={domain}"
        )
    return (
        f"Authentication-Results: {MX}; dkim=none; spf={'fail' if dmarc == 'fail' else 'none'} "
        f"smtp.mailfrom={domain}; dmarc={dmarc} header.from={domain}"
    )


def genuine_top(sender: str) -> list[str]:
    """What the MTA writes above a genuine message from ``sender``."""
    domain = sender.rpartition("@")[2]
    return [mta_says(domain), received(domain)]


_serial = itertools.count(1)


def compose(
    sender: str,
    body: str,
    *,
    to: str = SERVER_ADDRESS,
    subject: str = "",
    top: list[str] | None = None,
    below: tuple[str, ...] = (),
    in_reply_to: str | None = None,
) -> bytes:
    """A message as it reaches pbmserv: ``top`` (the MTA's lines; genuine ones by default),
    then the sender's own headers, with ``below`` among them, and a plain text body."""
    lines = genuine_top(sender) if top is None else list(top)
    lines += [
        f"From: {sender}",
        f"To: {to}",
        f"Subject: {subject}",
        f"Date: {formatdate()}",
        f"Message-ID: <abuse-{next(_serial)}.{uuid.uuid4().hex[:8]}@bench.test>",
    ]
    if in_reply_to:
        lines += [f"In-Reply-To: {in_reply_to}", f"References: {in_reply_to}"]
    lines += [f"Authentication-Results: {value}" for value in below]
    lines += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", ""]
    text = "\r\n".join(lines) + "\r\n" + body.replace("\r\n", "\n").replace("\n", "\r\n")
    return (text if text.endswith("\r\n") else text + "\r\n").encode()


@dataclass
class AbuseFigures:
    sent: int = 0
    codes: Counter[int] = field(default_factory=Counter)
    inbox: dict[str, int] = field(default_factory=dict)
    relayed: int = 0
    confirmations_sent: int = 0
    to_unconfirmed: int = 0
    to_unconfirmed_by: Counter[str] = field(default_factory=Counter)
    max_caused: int = 0
    max_caused_input: str = ""
    max_caused_unconfirmations: int = 0  # the same, confirmation mails apart
    guesses_recorded: int = 0  # wrong passwords recorded against alice
    accounts_for_victims: int = 0
    forged_played: int = 0
    forged_played_inputs: list[str] = field(default_factory=list)
    forged_tried: int = 0
    genuine_reply_played: bool = False
    owner_lockouts: int = 0
    owner_lockout_reply: str = ""
    tracebacks: int | None = None
    settle_reasons: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


class Abuse:
    """Sends the shapes one step at a time, waiting (bounded) for each step's mail."""

    def __init__(self, port: int, relay: RecordingRelay, db: ScratchDatabase) -> None:
        self.client = SmtpClient(port)
        self.relay = relay
        self.db = db
        self.figures = AbuseFigures()
        self.inputs: dict[str, str] = {}  # Message-ID -> what was sent, for the report

    # --- sending -----------------------------------------------------------------------

    def post(self, raw: bytes, envelope: str, rcpt: str = SERVER_ADDRESS) -> int:
        head, _, body = raw.partition(b"\r\n\r\n")
        found = re.search(rb"^Message-ID: (<[^>]*>)", head, re.MULTILINE)
        if found:
            lines = body.decode().splitlines()
            self.inputs[found.group(1).decode()] = (
                f"{len(lines)} line(s) like {lines[0][:90]!r}, envelope {envelope}, to {rcpt}"
                if lines
                else f"envelope {envelope}"
            )
        code, _text = self.client.send(Outgoing(envelope, raw, rcpt))
        self.figures.sent += 1
        self.figures.codes[code] += 1
        return code

    def settle(self, since: int) -> list[Relayed]:
        """Wait until the inbox and outbox are idle; the relayed mails after ``since``."""
        done = wait_settled(self.db, 120, 30)
        self.figures.settle_reasons[done.reason] += 1
        time.sleep(0.2)  # the last relay conversation ends
        return self.relay.messages()[since:]

    def send(self, sender: str, body: str, *, envelope: str | None = None, **kw) -> list[Relayed]:
        since = self.relay.count()
        self.post(compose(sender, body, **kw), envelope or sender, kw.get("to", SERVER_ADDRESS))
        return self.settle(since)

    # --- users -------------------------------------------------------------------------

    def sign_up(self, names: list[str]) -> None:
        """Each signs up and confirms by replying to the confirmation mail (all at once)."""
        since = self.relay.count()
        for name in names:
            self.post(compose(address(name), f"signup {name} {password(name)}"), address(name))
        asked = [m for m in self.settle(since) if is_confirmation(m)]
        since = self.relay.count()
        for mail in asked:
            message = parse_relayed(mail.raw)
            reply_to = message["Reply-To"].addresses[0].addr_spec
            quoted = "".join(f"> {line}\n" for line in str(message.get_content()).splitlines())
            body = f"yes, that was me\n\n{quoted}"
            who = mail.rcpt_tos[0]
            raw = compose(who, body, to=reply_to, subject=f"Re: {message['Subject']}")
            self.post(raw, who, reply_to)
        self.settle(since)
        missing = [n for n in names if not self.db.scalar(
            "SELECT count(*) FROM users WHERE userid = :u", u=n)]  # fmt: skip
        if missing:
            raise RuntimeError(f"sign-up by mail failed for {', '.join(missing)}")

    # --- the shapes --------------------------------------------------------------------

    def signup_floods(self, messages: int) -> None:
        body = "\n".join(f"signup sp{n:02d} pw-sp{n:02d}" for n in range(30))
        since = self.relay.count()
        victims = ["target1@victim.test"] * messages + [
            f"target{n}@victim.test" for n in range(2, 6) for _ in range(3)
        ]
        for victim in victims:
            top = [mta_says("victim.test", "none"), received("evil.test")]
            self.post(compose(victim, body, top=top), victim)
        self.settle(since)

    def message_fanout(self, users: list[str]) -> None:
        pw = f"mallory {MALLORY_PW}"
        for named in (users, users[:10]):
            line = f"message {pw} {' '.join(named)} {SPAM}"
            self.send(MALLORY, "\n".join([line] * 30))
        for n in range(10):  # one opponent, flooded over 10 messages
            self.send(
                MALLORY, "\n".join(f"message {pw} {users[0]} buy now {n}.{k}" for k in range(30))
            )

    def chat_fanout(self, watchers: list[str]) -> tuple[str, str]:
        """alice challenges bob; the watchers try to observe; alice chats 30 lines, sends a
        600-byte move, then plays a real one. bob's latest board mail (its Reply-To and
        Message-ID)."""
        out = self.send(address("alice"), "chameleon challenge alice bob")
        since = self.relay.count()
        for name in watchers:
            raw = compose(address(name), f"chameleon observe 1 {name} {password(name)}")
            self.post(raw, address(name))
        self.settle(since)
        alice = f"alice {password('alice')}"
        self.send(
            address("alice"), "\n".join(f"chameleon chat 1 {alice} spam {n}" for n in range(30))
        )
        self.send(address("alice"), f"chameleon move 1 {alice} {'a1x' * 200}")
        out += self.send(address("alice"), f"chameleon move 1 {alice} b2x")
        return latest_board_mail(out, address("bob"))

    def email_changes(self) -> None:
        lines = [f"email mallory {MALLORY_PW} victim{n:02d}@victim.test" for n in range(30)]
        self.send(MALLORY, "\n".join(lines))

    def ply(self) -> int:
        return int(self.db.scalar("SELECT ply FROM games WHERE id = 1") or 0)

    def forged_replies(self, reply_to: str, message_id: str) -> None:
        bob, domain = address("bob"), USERS_DOMAIN
        none = mta_says(domain, "none")
        forged_pass = f"{MX}; dmarc=pass header.from={domain}"
        variants: list[tuple[str, list[str], tuple[str, ...], str]] = [
            ("forged pass below the MTA's Received", [none, received("evil.test")],
             (forged_pass, f"{MX}; dkim=pass header.d={domain}"), bob),
            ("forged pass below, mallory's envelope", [none, received("evil.test")],
             (forged_pass,), MALLORY),
            ("pass in a quoted local part", [
                f'Authentication-Results: {MX}; dkim=none; spf=fail '
                f'smtp.mailfrom="x;dmarc=pass y"@evil.test', received("evil.test")], (), bob),
            ("pass in a comment", [
                f"Authentication-Results: {MX}; dkim=fail (bad signature; dmarc=pass ) "
                f"header.d={domain}", received("evil.test")], (), bob),
            ("no Authentication-Results", [received("evil.test")], (), bob),
            ("dkim=pass header.d=test", [
                f"Authentication-Results: {MX}; dkim=pass header.d=test header.s=s1 "
                "header.b=AbCd", received("evil.test")], (), bob),
            ("MTA says dmarc=fail, forged pass below",
             [mta_says(domain, "fail"), received("evil.test")], (forged_pass,), bob),
            ("duplicated forged A-R below", [none, received("evil.test")],
             (forged_pass, forged_pass, forged_pass), bob),
        ]  # fmt: skip
        for label, top, below, envelope in variants:
            before = self.ply()
            self.figures.forged_tried += 1
            self.send(bob, "c3o", to=reply_to, subject="Re: board", top=top, below=below,
                      envelope=envelope, in_reply_to=message_id)  # fmt: skip
            if self.ply() != before:
                self.figures.forged_played += 1
                self.figures.forged_played_inputs.append(
                    f"{label}: top={top[:-1]} below={list(below)} envelope={envelope}"
                )
        before = self.ply()  # the control: bob himself, the MTA says DMARC passed
        self.send(bob, "c3o", to=reply_to, subject="Re: board", in_reply_to=message_id)
        self.figures.genuine_reply_played = self.ply() != before

    def forged_owner(self) -> None:
        alice, domain = address("alice"), USERS_DOMAIN
        guesses = "\n".join(
            f"password alice GUESS{n} x\nmessage alice GUESS{n} mallory HIT{n}" for n in range(8)
        )
        forged_pass = f"{MX}; dmarc=pass header.from={domain}"
        evil = received("evil.test")
        for top, below in (
            ([evil], ()),
            ([mta_says(domain, "fail"), evil], (forged_pass,)),
            ([mta_says(domain, "none"), evil], (forged_pass,)),
            ([mta_says(domain, "none"), evil], (forged_pass, forged_pass)),
            ([], ()),  # nothing at all: the MTA wrote nothing
        ):
            self.send(alice, guesses, envelope=MALLORY, top=top, below=below)
        self.figures.guesses_recorded = int(
            self.db.scalar("SELECT count(*) FROM auth_failures WHERE userid = 'alice'") or 0
        )
        old = self.db.scalar("SELECT password_hash FROM users WHERE userid = 'alice'")
        out = self.send(alice, f"password alice {password('alice')} pw-alice2")
        new = self.db.scalar("SELECT password_hash FROM users WHERE userid = 'alice'")
        if new == old:
            self.figures.owner_lockouts += 1
            bodies = [str(parse_relayed(m.raw).get_body(("plain",)).get_content()) for m in out]
            self.figures.owner_lockout_reply = " | ".join(b.strip()[:300] for b in bodies)

    # --- measuring ---------------------------------------------------------------------

    def measure(self) -> AbuseFigures:
        f, db = self.figures, self.db
        f.inbox = {str(s): int(n) for s, n in db.rows(
            "SELECT status, count(*) FROM inbox GROUP BY status")}  # fmt: skip
        f.confirmations_sent = int(
            db.scalar("SELECT count(*) FROM outbox WHERE kind = 'confirmation'") or 0
        )
        confirmed = {
            str(a).lower()
            for (a,) in db.rows("SELECT address FROM addresses WHERE confirmed_at IS NOT NULL")
        }
        messages = self.relay.messages()
        f.relayed = len(messages)
        to_each: Counter[str] = Counter()
        asked: Counter[str] = Counter()
        for item in messages:
            for rcpt in (r.lower() for r in item.rcpt_tos):
                if rcpt in confirmed:
                    continue
                if is_confirmation(item):
                    asked[rcpt] += 1
                    extra = asked[rcpt] > 1
                else:
                    extra = True
                if extra:
                    to_each[rcpt] += 1
        # The outbox too (a mail the relay has not had yet counts as well).
        for rcpt, kind, n in db.rows(
            "SELECT lower(recipient), kind, count(*) FROM outbox "
            "WHERE status <> 'sent' GROUP BY lower(recipient), kind"
        ):
            if rcpt not in confirmed and kind != "confirmation":
                to_each[rcpt] += int(n)
        f.to_unconfirmed = sum(to_each.values())
        f.to_unconfirmed_by = to_each
        rows = db.rows(
            "SELECT o.inbox_id, count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id "
            "WHERE lower(o.recipient) <> lower(coalesce(i.from_address, '')) "
            "GROUP BY o.inbox_id ORDER BY count(*) DESC"
        )
        if rows:
            inbox_id, f.max_caused = int(rows[0][0]), int(rows[0][1])
            kinds = db.rows(_CAUSED_BY_KIND, i=inbox_id)
            raw = db.scalar("SELECT raw FROM inbox WHERE id = :i", i=inbox_id) or b""
            message = parse_relayed(bytes(raw))  # type: ignore[arg-type]
            what = self.inputs.get(header_text(message, "Message-ID").strip(), "?")
            f.max_caused_input = (
                f"inbox {inbox_id} From {header_text(message, 'From')}, {what} "
                f"({', '.join(f'{k} x{n}' for k, n in kinds)})"
            )
            f.max_caused_unconfirmations = max(
                sum(int(n) for k, n in db.rows(_CAUSED_BY_KIND, i=i) if k != "confirmation")
                for i, _n in rows
            )
        f.accounts_for_victims = int(
            db.scalar("SELECT count(*) FROM users WHERE lower(email) LIKE '%@victim.test'") or 0
        )
        return f


_CAUSED_BY_KIND = (
    "SELECT kind, count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id "
    "WHERE o.inbox_id = :i AND lower(o.recipient) <> lower(coalesce(i.from_address, '')) "
    "GROUP BY kind"
)


def is_confirmation(item: Relayed) -> bool:
    message = parse_relayed(item.raw)
    return header_text(message, "Subject") == CONFIRM_SUBJECT or "+confirm-" in header_text(
        message, "Reply-To"
    )


def latest_board_mail(out: list[Relayed], to: str) -> tuple[str, str]:
    for item in reversed(out):
        if to in (r.lower() for r in item.rcpt_tos):
            message = parse_relayed(item.raw)
            reply_to = header_text(message, "Reply-To")
            if "+b" in reply_to:
                return message["Reply-To"].addresses[0].addr_spec, header_text(
                    message, "Message-ID"
                )
    raise RuntimeError(f"no board mail with a seat's reply address reached {to}")


def run_abuse(db_url: str | None, workdir: Path, quick: bool, keep: bool) -> AbuseFigures:
    """The whole phase on its own server and database; the figures."""
    folder = workdir / "abuse"
    folder.mkdir(exist_ok=True)
    given = None if db_url and db_url.startswith("sqlite") else db_url
    db = ScratchDatabase.create(given, folder)
    relay = RecordingRelay().start()
    server: ServerProcess | None = None
    try:
        db.upgrade()
        port = free_port()
        env = {"PBMSERV_CONFIRM_ADDRESSES": "true", "PBMSERV_TRUSTED_AUTHSERV_IDS": MX}
        server = ServerProcess(
            db.url, relay.address, folder, port=port, env=env, poll_seconds=0.5, rate_limit=0
        )
        server.start()
        abuse = Abuse(port, relay, db)
        users = [f"u{n:02d}" for n in range(20)]
        watchers = [f"w{n:02d}" for n in range(20)]
        abuse.sign_up(["alice", "bob", "mallory", *users, *watchers])
        abuse.signup_floods(15 if quick else 60)
        abuse.message_fanout(users)
        reply_to, message_id = abuse.chat_fanout(watchers)
        abuse.email_changes()
        abuse.forged_replies(reply_to, message_id)
        abuse.forged_owner()
        abuse.client.close()
        figures = abuse.measure()
        server.stop()
        figures.tracebacks = count_tracebacks(server.log_path)
        return figures
    finally:
        if server is not None:
            server.stop()
        relay.stop()
        if not keep:
            db.drop()


def abuse_rows(f: AbuseFigures) -> list[tuple[str, str, str]]:
    refused = {code: n for code, n in sorted(f.codes.items()) if code != 250}
    # "mails to never-confirmed addresses": beyond one confirmation mail each.
    return [
        ("sent", str(f.sent), ""),
        ("accepted (250)", str(f.codes[250]), ""),
        *[(f"refused {code}", str(n), "") for code, n in refused.items()],
        ("held (inbox held)", str(f.inbox.get("held", 0)), ""),
        ("ignored (inbox ignored)", str(f.inbox.get("ignored", 0)), ""),
        ("processed (inbox done)", str(f.inbox.get("done", 0)), ""),
        ("still pending in the inbox", str(f.inbox.get("pending", 0)), "must be 0"),
        ("mails at the relay", str(f.relayed), ""),
        ("confirmation mails sent", str(f.confirmations_sent), ""),
        ("mails to never-confirmed addresses", str(f.to_unconfirmed), "must be 0"),
        ("max mails caused by one message", str(f.max_caused), f"<= {MAX_MAILS_PER_MESSAGE}"),
        ("  confirmation mails apart", str(f.max_caused_unconfirmations), "<= 25"),
        ("accounts at victims' addresses", str(f.accounts_for_victims), "must be 0"),
        ("forged replies played", f"{f.forged_played} of {f.forged_tried}", "must be 0"),
        ("genuine reply played (control)", "yes" if f.genuine_reply_played else "NO", "yes"),
        ("wrong passwords recorded for alice", str(f.guesses_recorded), ""),
        ("owner lock-outs", str(f.owner_lockouts), "must be 0"),
        ("tracebacks in the server log", "n/a" if f.tracebacks is None else str(f.tracebacks),
         "must be 0"),
    ]  # fmt: skip


def abuse_details(f: AbuseFigures) -> list[str]:
    lines = []
    if f.max_caused_input:
        lines.append(f"most mails from one message: {f.max_caused_input}")
    if f.to_unconfirmed_by:
        top = ", ".join(f"{a} x{n}" for a, n in f.to_unconfirmed_by.most_common(8))
        lines.append(f"mails to never-confirmed addresses: {top}")
    lines += [f"forged reply played: {text}" for text in f.forged_played_inputs]
    if f.owner_lockouts:
        lines.append(f"alice's own password change was answered: {f.owner_lockout_reply}")
    waits = ", ".join(f"{reason} x{n}" for reason, n in f.settle_reasons.items())
    lines.append(f"waits for the inbox and outbox: {waits}")
    return lines
