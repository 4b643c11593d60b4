"""The robots' turns, played off every message's transaction (core.robots, core.robot_moves).

Each turn is read in a session of its own, thought about with no transaction open (a robot
may think for seconds), then carried out in a transaction that plays it only if the board is
still where it was: a crash or a kill while a robot thinks loses nothing (the board waits, and
is thought about again) and plays nothing twice. A turn that fails is left for a while, and
the others go on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext, utcnow
from pbmserv.core.robot_moves import carry_out, decide
from pbmserv.core.robots import RobotTurn, due_turns, load_turn
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.engine import transaction
from pbmserv.mail.processor import queue_notifications

log = logging.getLogger("pbmserv.robots")

#: How long a board whose robot turn failed is left alone before it is tried again.
RETRY_AFTER_SECONDS = 300.0
#: Turns looked at in one round (answers first, then the longest waiting moves).
TURNS_A_ROUND = 20


@dataclass
class RobotRunner:
    """Plays the robots' turns, round after round (:meth:`play_round`)."""

    factory: sessionmaker[Session]
    settings: Settings
    #: Board -> when a failed turn there may be tried again (monotonic seconds).
    failed_until: dict[int, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic

    def play_round(self) -> int:
        """Carry out the robots' due turns; how many were carried out."""
        with self.factory() as session:
            turns = due_turns(session, TURNS_A_ROUND)
        now = self.clock()
        self.failed_until = {b: t for b, t in self.failed_until.items() if t > now}
        done = 0
        for turn in turns:
            if turn.board in self.failed_until:
                continue
            try:
                done += self.play_turn(turn)
            except Exception:
                log.exception("a robot's turn on board %s failed; trying again later", turn.board)
                self.failed_until[turn.board] = self.clock() + RETRY_AFTER_SECONDS
        return done

    def play_turn(self, turn: RobotTurn) -> bool:
        """Think about one turn and carry it out; False when the board moved on meanwhile."""
        with self.factory() as session:
            board = load_turn(self._context(session), turn, for_update=False)
        if board is None:
            return False
        decision = decide(board, turn, self.settings.robot_cpu_seconds)
        now = utcnow()
        with transaction(self.factory) as session:
            ctx = self._context(session, now)
            board = load_turn(ctx, turn, for_update=True)
            if board is None:
                return False
            section = carry_out(ctx, board, decision)
            settle_finished(ctx)
            queue_notifications(session, self.settings, ctx.notifications, now)
        if section is not None:
            fields = {
                "board": turn.board,
                "robot_level": turn.level,
                "cpu_ms": round(decision.cpu_seconds * 1000),
                "did": section.summary,
            }
            log.info("robot", extra={"fields": fields})
        return section is not None

    def _context(self, session: Session, now: datetime | None = None) -> CommandContext:
        """A context with no sender (no reply goes anywhere) and, to carry out a turn, one
        time for all it writes."""
        ctx = CommandContext(session=session, settings=self.settings, sender=None)
        if now is not None:
            ctx.clock = lambda: now
        return ctx
