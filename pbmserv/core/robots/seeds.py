"""The robots' generators, seeded from a server secret as well as the turn.

A robot's search draws from a generator; seeded from public facts alone (board, ply) a player
could run the same search offline and try candidate moves against the exact reply before
mailing one. So the seed is a keyed hash of the turn, under a key derived from the secret the
bounce addresses are signed with (core.accounts.bouncing's ``server_keys`` row): nobody without the
database can derive it, and the operator, who has it, can replay any robot turn exactly::

    key = robot_key(session)
    robot_move(game, seat_view(game, state, turn.seat), turn.level, robot_rng(key, turn))
"""

from __future__ import annotations

import hashlib
import hmac
import random
from typing import Protocol

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from pbmserv.core.accounts.bouncing import bounce_key

#: What the robots' key is derived for: one secret, a key of its own for each use.
_PURPOSE = b"pbmserv robot seeds 1"


class TurnFacts(Protocol):
    """What a robot's seed names of its turn (core.robots.turns.RobotTurn)."""

    @property
    def board(self) -> int: ...
    @property
    def ply(self) -> int: ...
    @property
    def task(self) -> str: ...


def robot_key(bind: Session | Connection) -> bytes:
    """The robots' seed key, derived from the server's secret (made on first use, in the
    caller's transaction)."""
    return hmac.digest(bounce_key(bind), _PURPOSE, hashlib.sha256)


def public_seed(turn: TurnFacts) -> str:
    """What the seed was made of before: public facts only (kept to measure against)."""
    return f"robot:{turn.board}:{turn.ply}:{turn.task}"


def turn_seed(key: bytes, turn: TurnFacts) -> str:
    """The seed of ``turn``'s generator: the public facts, keyed."""
    return hmac.digest(key, public_seed(turn).encode(), hashlib.sha256).hex()


def robot_rng(key: bytes, turn: TurnFacts) -> random.Random:
    """The generator a robot thinks about ``turn`` with: the same for the same key and turn."""
    return random.Random(turn_seed(key, turn))
