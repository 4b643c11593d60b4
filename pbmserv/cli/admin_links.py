"""`pbmserv admin links ...`: the players' private links to the web view of their boards.

A private link (see :mod:`pbmserv.core.play.private_links`) shows a player's own view of a
board; revoking it makes it lead nowhere at once, and the player's next board mail carries a
new one (players revoke their own by mail: ``GAME newlink``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from pbmserv.cli import tables
from pbmserv.core import admin as ops
from pbmserv.core.context import CommandContext

Handler = Callable[[argparse.Namespace, CommandContext], None]
ActionMaker = Callable[[Any, str, Handler, str], argparse.ArgumentParser]


def add_links_parser(groups: Any, action: ActionMaker) -> None:
    """Add the ``links`` group to the admin shell (``action`` makes one subcommand)."""
    actions = groups.add_parser(
        "links", help="the players' private links to the web view of their boards"
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    p = action(
        actions,
        "revoke",
        _revoke,
        "make a player's private link to a board stop working (their next board mail "
        "carries a new one)",
    )
    p.add_argument("board")
    p.add_argument("userid", help="the player's user id (or seat number)")


def _revoke(args: argparse.Namespace, ctx: CommandContext) -> None:
    message = ops.revoke_link(ctx, args.board, args.userid)
    tables.print_message(message, args.json, board=args.board, userid=args.userid)
