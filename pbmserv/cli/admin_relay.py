"""`pbmserv admin relay ...`: whether the relay holds the outgoing mail, and releasing it.

A relay that refused the server's login for good (535) holds the outbox: no mail is sent and
no login tried until its credentials change or the operator runs ``release`` (see
:mod:`pbmserv.outbound.relay.hold`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from pbmserv.cli import tables
from pbmserv.core.context import CommandContext
from pbmserv.outbound.relay import hold as relay_hold

Handler = Callable[[argparse.Namespace, CommandContext], None]
ActionMaker = Callable[[Any, str, Handler, str], argparse.ArgumentParser]


def add_relay_parser(groups: Any, action: ActionMaker) -> None:
    """Add the ``relay`` group to the admin shell (``action`` makes one subcommand)."""
    actions = groups.add_parser(
        "relay", help="whether the relay refused the login and holds the outgoing mail"
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    action(actions, "status", _status, "the relays that hold the outgoing mail, and why")
    action(
        actions,
        "release",
        _release,
        "try the relay's login again at the next delivery (after the account was fixed at "
        "the provider; changed credentials release it by themselves)",
    )


def _status(args: argparse.Namespace, ctx: CommandContext) -> None:
    holds = relay_hold.list_holds(ctx.session.connection())
    tables.print_rows(holds, args.json, "no relay holds the outgoing mail")


def _release(args: argparse.Namespace, ctx: CommandContext) -> None:
    count = relay_hold.release(ctx.session.connection())
    message = (
        f"released {count} relay(s): the next delivery logs in once more"
        if count
        else "no relay held the outgoing mail"
    )
    tables.print_message(message, args.json, released=count)
