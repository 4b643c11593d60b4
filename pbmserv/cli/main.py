"""`pbmserv serve | web | mail | deliver | db | config | admin`: the entry points an operator
runs."""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine

from pbmserv.cli.dkim import add_dkim_parser, run_dkim
from pbmserv.cli.options import add_config_options, add_setting_option, settings_from
from pbmserv.config import (
    ConfigError,
    Settings,
    describe_settings,
    describe_settings_by_part,
    mask_url,
)
from pbmserv.core.ratings.history import fill_glicko
from pbmserv.db.engine import make_engine, session_factory, transaction
from pbmserv.db.migrate import current_revision, head_revision, is_at_head, upgrade
from pbmserv.logs import configure_logging

log = logging.getLogger("pbmserv.serve")

EX_DATAERR = 65  # sysexits: the input was bad (Postfix bounces it)
EX_TEMPFAIL = 75  # sysexits: try again later (Postfix keeps the message queued)
EX_CONFIG = 78
EX_UNAVAILABLE = 69  # sysexits: the port to listen on is taken (a person must act)


def _common(parser: argparse.ArgumentParser) -> None:
    add_config_options(parser)
    add_setting_option(
        parser,
        "--address",
        setting="address",
        help="the server's own address (env PBMSERV_ADDRESS)",
    )
    add_setting_option(
        parser,
        "--relay",
        setting="relay",
        help="deliver through this SMTP relay HOST:PORT "
        "(env PBMSERV_RELAY); without one, mail goes to the spool folder",
    )
    add_setting_option(
        parser,
        "--spool",
        setting="spool",
        help="folder for outgoing .eml files (env PBMSERV_SPOOL; default ./spool)",
    )
    add_setting_option(
        parser,
        "--max-size",
        setting="max_message_bytes",
        type=int,
        help="largest message accepted, in bytes (default 1048576)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pbmserv", description="Play-by-email game server.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the SMTP listener and the mail workers")
    _common(serve)
    add_setting_option(
        serve,
        "--listen",
        setting="listen",
        help="HOST:PORT to listen on (env PBMSERV_LISTEN; default 127.0.0.1:2525)",
    )
    add_setting_option(
        serve,
        "--imap",
        setting="imap",
        metavar="URL",
        help="read this hosted mailbox (imaps://USER@HOST/FOLDER; password in env "
        "PBMSERV_IMAP_PASSWORD) instead of listening for SMTP (env PBMSERV_IMAP)",
    )
    add_setting_option(
        serve,
        "--poll",
        setting="poll_seconds",
        type=float,
        help="seconds between database polls (default 2)",
    )
    add_setting_option(
        serve,
        "--rate-limit",
        setting="rate_limit_per_hour",
        type=int,
        help="messages per envelope sender per hour (default 300; 0 = no limit)",
    )
    add_setting_option(
        serve,
        "--from-rate-limit",
        setting="from_rate_limit_per_hour",
        type=int,
        help="messages per hour in the name of one From address by other envelope senders "
        "(default 60; 0 = no limit)",
    )
    add_setting_option(
        serve,
        "--workers",
        setting="workers",
        type=int,
        help="server processes sharing the port and the database, a core each (default 1)",
    )
    add_setting_option(
        serve,
        "--max-connections",
        setting="max_connections",
        type=int,
        help="SMTP sessions at once; more are answered 421 (default 100; 0 = no limit)",
    )
    add_setting_option(
        serve,
        "--web-listen",
        setting="web_listen",
        metavar="HOST:PORT",
        help="where the web view it starts listens (env PBMSERV_WEB_LISTEN; default "
        '127.0.0.1:8080; "": no web view)',
    )

    web = commands.add_parser(
        "web",
        help="run the read-only web view of the games (serve starts one itself)",
        description="Serve the games' read-only web pages over HTTP until SIGTERM or SIGINT "
        "(exit 0), for a TLS proxy in front of it (deploy/Caddyfile). `serve` starts one as a "
        "child process already, unless web_listen is empty.",
    )
    add_config_options(web)
    add_setting_option(
        web,
        "--listen",
        setting="web_listen",
        metavar="HOST:PORT",
        help="HOST:PORT to listen on (env PBMSERV_WEB_LISTEN; default 127.0.0.1:8080)",
    )
    web.add_argument("-v", "--verbose", action="store_true", help="log debug detail")

    deliver = commands.add_parser(
        "deliver",
        help="send the outbox's due mail once (relay or spool, as serve would), then exit",
        description="Send every due message in the outbox once, through the relay or into the "
        "spool (the same settings as serve), print a summary and exit: 0, or 75 when some mail "
        "waits for a retry.",
    )
    _common(deliver)

    mail = commands.add_parser(
        "mail", help="process one message from standard input (for a Postfix pipe or procmail)"
    )
    _common(mail)
    mail.add_argument(
        "-f", "--from", dest="envelope_from", help="the envelope sender (Postfix: ${sender})"
    )
    mail.add_argument(
        "--no-process",
        action="store_true",
        help="only store the message; a running `serve` processes it",
    )
    mail.add_argument(
        "recipients",
        nargs="*",
        metavar="RECIPIENT",
        help="the envelope recipients (Postfix: -- ${recipient}): a reply address may be "
        "in the envelope alone",
    )

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    for name, text in (
        ("upgrade", "apply the migrations up to the newest"),
        ("current", "show the database's migration revision"),
    ):
        sub = db_commands.add_parser(name, help=text)
        add_config_options(sub)

    config = commands.add_parser("config", help="the effective settings")
    config_commands = config.add_subparsers(dest="config_command", required=True)
    show = config_commands.add_parser(
        "show", help="print the settings in effect (file, environment, flags), secrets masked"
    )
    add_config_options(show)
    show.add_argument("--json", action="store_true", help="print JSON")

    from pbmserv.cli.admin import add_admin_parser

    add_admin_parser(commands)
    add_dkim_parser(commands)
    return parser


def _engine_at_head(settings: Settings, *, durable: bool = True) -> Engine | None:
    """The database's engine, or None (with the command to run) if it needs migrating."""
    engine = make_engine(settings.db_url, durable=durable)
    if is_at_head(engine):
        return engine
    print(
        f"pbmserv: the database {mask_url(settings.db_url)} is at revision "
        f"{current_revision(engine) or 'none (empty)'}, not {head_revision()}.\n"
        f"Run:  pbmserv db upgrade --db {mask_url(settings.db_url)}",
        file=sys.stderr,
    )
    return None


def _serve(settings: Settings) -> int:
    from pbmserv.outbound.signing import key_file_exposure
    from pbmserv.runtime import child_processes as kids
    from pbmserv.runtime.supervisor import WORKER_ENV, WORKER_SLOT_ENV, supervise
    from pbmserv.runtime.worker import DELIVER, ROBOTS, WEB, Server

    role = os.environ.get(kids.ROLE_ENV)
    # A delivery process writes claims and "sent" marks alone: a power cut may lose them and
    # no more than that (the mail goes again), so its commits need not wait for the disk.
    engine = _engine_at_head(settings, durable=role != DELIVER)
    if engine is None:
        return EX_CONFIG
    itself = [sys.executable, "-m", "pbmserv", *sys.argv[1:]]
    if role is not None:  # a child process of a `serve` (runtime/child_processes.py)
        if ROBOTS in role.split("+"):
            os.nice(19)  # robots think only with CPU no person's move is waiting for
        elif settings.child_niceness:
            os.nice(settings.child_niceness)  # the listener first: see Settings.child_niceness
        if role == WEB:
            return _web(settings, parent_fd=int(os.environ[kids.WAKE_FD_ENV]), engine=engine)
        mail_wake_fd = os.environ.get(kids.MAIL_WAKE_FD_ENV)
        server = Server(
            session_factory(engine),
            settings,
            parent=int(os.environ[kids.PARENT_ENV]),
            parts=frozenset(role.split("+")),
            wake_fd=int(os.environ[kids.WAKE_FD_ENV]),
            mail_wake_fd=int(mail_wake_fd) if mail_wake_fd else None,
        )
        asyncio.run(server.run())
        return 0
    parent = os.environ.get(WORKER_ENV)
    key_files = [
        settings.dkim_key_file if settings.dkim_selector else None,
        settings.dkim_ed25519_key_file if settings.dkim_ed25519_selector else None,
    ]
    for key_file in key_files if parent is None else []:
        if key_file is not None and (exposed := key_file_exposure(key_file)):
            log.warning(exposed)  # at the start, as ssh says it of its keys; mail still goes
    if parent is None and settings.robots:
        _make_missing_robots(engine)
    if parent is None and settings.workers > 1:
        if settings.listen_port == 0:
            print("pbmserv: with several workers, name the port to listen on", file=sys.stderr)
            return EX_CONFIG
        engine.dispose()
        return supervise(settings.workers, itself)
    server = Server(
        session_factory(engine),
        settings,
        parent=int(parent) if parent else None,
        heartbeat=True,  # for the web view's /healthz and /metrics (runtime/heartbeats.py)
        **_serving_parts(
            settings, itself, first_worker=os.environ.get(WORKER_SLOT_ENV, "0") == "0"
        ),
    )
    try:
        asyncio.run(server.run())
    except ConfigError as error:  # found only at the start (e.g. the mailbox URL): one line
        print(f"pbmserv: {error}", file=sys.stderr)
        return EX_CONFIG
    except OSError as error:
        if error.errno not in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            raise
        # One line, and an exit the systemd unit does not restart in a loop.
        print(f"pbmserv: cannot listen on {settings.listen}: {error.strerror}", file=sys.stderr)
        return EX_UNAVAILABLE
    return 0


def _make_missing_robots(engine: Engine) -> None:
    """The robots the migration made, made again if an operator removed one."""
    from sqlalchemy.exc import IntegrityError

    from pbmserv.core.robots.turns import ensure_robots
    from pbmserv.db.times import utcnow

    try:
        with transaction(session_factory(engine)) as session:
            made = ensure_robots(session, utcnow())
    except IntegrityError:  # another server made them at the same moment
        return
    for robot in made:
        log.info("made the missing robot %s", robot.userid)


def _serving_parts(
    settings: Settings, itself: list[str], first_worker: bool = True
) -> dict[str, Any]:
    """What `serve` does itself and which child processes do the rest: delivery in
    ``delivery_processes`` of them, the processing in one (``processing_process``), which
    also delivers when no process is there for it, the robots' thinking in one and the web
    view in one (unless ``web_listen`` is empty), these two started by the first worker only
    (more would think the same moves twice, or listen on the same port)."""
    from pbmserv.runtime import child_processes as kids
    from pbmserv.runtime.worker import DELIVER, EVERYTHING, PROCESS, ROBOTS, WEB

    parts, children = set(EVERYTHING), []
    delivery = None
    if settings.delivery_processes:
        delivery = kids.Children(frozenset({DELIVER}), settings.delivery_processes, itself)
        parts.discard(DELIVER)
    if settings.processing_process:
        processing = {PROCESS} if delivery else {PROCESS, DELIVER}
        handed = {kids.MAIL_WAKE_FD_ENV: delivery.pipe.write_fd} if delivery else {}
        children.append(kids.Children(frozenset(processing), 1, itself, handed))
        parts -= processing
    children += [delivery] if delivery else []
    if settings.robots and first_worker:
        handed = {kids.MAIL_WAKE_FD_ENV: delivery.pipe.write_fd} if delivery else {}
        children.append(kids.Children(frozenset({ROBOTS}), 1, itself, handed))
    if settings.web_host_port is not None and first_worker:
        children.append(kids.Children(frozenset({WEB}), 1, itself))
    return {"parts": frozenset(parts), "children": children}


def _web(settings: Settings, parent_fd: int | None = None, engine: Engine | None = None) -> int:
    """`pbmserv web`, or `serve`'s web view child (``parent_fd``: its end of the wake pipe;
    ``engine``: the database's, found at the newest revision already)."""
    where = settings.web_host_port
    if where is None:
        print(
            "pbmserv: web_listen is empty: give --listen HOST:PORT "
            "(or set web_listen, env PBMSERV_WEB_LISTEN)",
            file=sys.stderr,
        )
        return 2
    engine = engine or _engine_at_head(settings)
    if engine is None:
        return EX_CONFIG
    engine.dispose()  # the web view makes its own
    from pbmserv.web.serving import run_web

    return run_web(settings, *where, parent_fd=parent_fd)


def _deliver(settings: Settings) -> int:
    from pbmserv.outbound.delivery import deliver_all_due

    engine = _engine_at_head(settings)
    if engine is None:
        return EX_CONFIG
    report = asyncio.run(deliver_all_due(session_factory(engine), settings))
    print(f"pbmserv deliver: {report.summary()}")
    return EX_TEMPFAIL if report.deferred else 0


def _mail(
    settings: Settings, envelope_from: str | None, recipients: Sequence[str], process: bool
) -> int:
    """Store one message from standard input, then (normally) answer it. The MTA's pipe keeps
    what is written on standard error in its log: one plain line says what happened."""
    from pbmserv.inbound.inbox import Stored, store_message
    from pbmserv.outbound.delivery import deliver_all_due
    from pbmserv.runtime.processor import process_pending

    raw = sys.stdin.buffer.read(settings.max_message_bytes + 1)
    if len(raw) > settings.max_message_bytes:
        print(
            f"pbmserv: message larger than {settings.max_message_bytes} bytes refused",
            file=sys.stderr,
        )
        return EX_DATAERR
    try:
        engine = make_engine(settings.db_url)
        ready = is_at_head(engine)
    except Exception as error:  # unreachable database: the MTA must keep the message, not bounce
        print(f"pbmserv: database unavailable, try later: {type(error).__name__}", file=sys.stderr)
        return EX_TEMPFAIL
    if not ready:
        print(
            f"pbmserv: database not at head; run: pbmserv db upgrade --db "
            f"{mask_url(settings.db_url)}",
            file=sys.stderr,
        )
        return EX_TEMPFAIL
    factory = session_factory(engine)
    try:
        stored = store_message(factory, settings, raw, envelope_from, envelope_to=recipients)
    except Exception as error:  # the MTA keeps the message and retries
        print(f"pbmserv: could not store the message: {error}", file=sys.stderr)
        return EX_TEMPFAIL
    if stored is Stored.RATE_LIMITED:
        print("pbmserv: too many messages from this sender; try later", file=sys.stderr)
        return EX_TEMPFAIL
    if stored is Stored.DUPLICATE:
        print("pbmserv: a copy of a message already stored; not stored again", file=sys.stderr)
        return 0
    if not process:
        print("pbmserv: stored; a running serve answers it", file=sys.stderr)
        return 0
    # The message is safe in the inbox; anything below only speeds up the answer.
    try:
        processed = process_pending(factory, settings)
        report = asyncio.run(deliver_all_due(factory, settings))
    except Exception as error:
        print(f"pbmserv: stored; processing deferred: {type(error).__name__}", file=sys.stderr)
        return 0
    print(f"pbmserv: stored; {processed} processed; mail: {report.summary()}", file=sys.stderr)
    return 0


def _show_config(settings: Settings, as_json: bool) -> int:
    if as_json:  # flat, one key a setting: what scripts read
        print(json.dumps(describe_settings(settings), indent=2))
        return 0
    parts = describe_settings_by_part(settings)
    width = max(len(name) for shown in parts.values() for name in shown)
    for number, (heading, shown) in enumerate(parts.items()):
        print(("\n" if number else "") + f"# {heading}")
        for name, value in shown.items():
            print(f"{name.ljust(width)}  {json.dumps(value)}")
    return 0


def _db(settings: Settings, action: str) -> int:
    engine = make_engine(settings.db_url)
    if action == "upgrade":
        upgrade(engine)
        if replayed := fill_glicko(engine, settings.rating_period_days):
            print(f"pbmserv: replayed {replayed} rated board(s) into the Glicko-2 ratings")
        print(f"pbmserv: {mask_url(settings.db_url)} is at revision {current_revision(engine)}")
    else:
        print(current_revision(engine) or "none")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
    except ConfigError as error:
        print(f"pbmserv: {error}", file=sys.stderr)
        # Under an MTA's pipe, a configuration mistake must not bounce the player's mail.
        return EX_TEMPFAIL if args.command == "mail" else EX_CONFIG
    if args.command == "mail":
        # Under an MTA's pipe, standard error ends up in the MTA's log, cut short: warnings
        # alone, as plain text, and the one line _mail prints (JSON is for `serve`).
        configure_logging("text", args.verbose, quiet=not args.verbose)
    else:
        configure_logging(settings.log_format, getattr(args, "verbose", False))
    try:
        code = _run(args, settings)
        sys.stdout.flush()  # here, where a reader gone is caught, not at the exit
        return code
    except BrokenPipeError:
        # The reader of the output left early (`pbmserv config show | head`): not an error.
        # Standard output goes nowhere from now on, so that closing it cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        return _serve(settings)
    if args.command == "web":
        return _web(settings)
    if args.command == "deliver":
        return _deliver(settings)
    if args.command == "mail":
        return _mail(settings, args.envelope_from, args.recipients, not args.no_process)
    if args.command == "db":
        return _db(settings, args.db_command)
    if args.command == "config":
        return _show_config(settings, args.json)
    if args.command == "dkim":
        return run_dkim(args, settings)
    if args.command == "admin":
        from pbmserv.cli.admin import run_admin

        return run_admin(args, settings)
    return 2


if __name__ == "__main__":
    sys.exit(main())
