"""The robots' turns, played off every message's transaction (core.robots.turns, core.robots.moves).

Each turn is read in a session of its own, thought about with no transaction open (a robot
may think for seconds), then carried out in a transaction that plays it only if the board is
still where it was: a crash or a kill while a robot thinks loses nothing (the board waits, and
is thought about again) and plays nothing twice. A turn that fails is left for a while, and
the others go on.

The robots share their time fairly between the people they play (runtime.robot_fairness): each
turn is thought about in a thread of its own, one person's at a time for each person, up to
``robot_turns_at_once`` people at once, the person served longest ago first and within a CPU
budget per person per hour; so a quick robot1 reply no longer waits behind another person's
queue of robot3 boards. (The threads share one core: a search's CPU cap counts the whole
process's CPU, so a robot thinking beside another may stop a little sooner, as it would on a
busy machine.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.play.boards import Board
from pbmserv.core.robots.moves import Decision, carry_out, decide
from pbmserv.core.robots.seeds import robot_key
from pbmserv.core.robots.turns import RobotTurn, due_turns, load_turn
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.engine import transaction
from pbmserv.db.times import utcnow
from pbmserv.outbound.outbox_rows import queue_notifications
from pbmserv.runtime.robot_fairness import CpuLedger, ProposalAnswers, RoundRobin, pick_fair

log = logging.getLogger("pbmserv.robots")

#: How long a board whose robot turn failed is left alone before it is tried again.
RETRY_AFTER_SECONDS = 300.0


@dataclass
class RobotRunner:
    """Plays the robots' turns: :meth:`step` again and again (serve), or :meth:`play_round`."""

    factory: sessionmaker[Session]
    settings: Settings
    #: Board -> when a failed turn there may be tried again (monotonic seconds).
    failed_until: dict[int, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    order: RoundRobin = field(default_factory=RoundRobin)
    answers: ProposalAnswers = field(default_factory=ProposalAnswers)
    ledger: CpuLedger = field(init=False)
    #: Person -> the thread thinking about their turn.
    _thinking: dict[str, threading.Thread] = field(default_factory=dict, init=False)
    _carried: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _ended: threading.Event = field(default_factory=threading.Event, init=False)
    _key: bytes | None = field(default=None, init=False)
    _key_lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        per_hour = self.settings.robot_cpu_seconds_per_person_per_hour
        self.ledger = CpuLedger(per_hour, lambda: self.clock())

    def step(self, wait_seconds: float) -> int:
        """Start the due turns there is room for; while turns are being thought about, wait
        up to ``wait_seconds`` for one to end. How many turns were carried out since the last
        step."""
        self.start_due()
        if self.thinking():
            self._ended.wait(wait_seconds)
        return self._collect()

    def play_round(self) -> int:
        """Start the due turns there is room for and wait for all being thought about; how
        many were carried out."""
        self.start_due()
        while True:
            with self._lock:
                threads = list(self._thinking.values())
            if not threads:
                break
            for thread in threads:
                thread.join()
        return self._collect()

    def finish(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the turns being thought about (on stopping: a
        turn still thought about then is cut short, and thought about again next time)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._thinking.values())
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _collect(self) -> int:
        """How many turns were carried out since this was last asked."""
        self._ended.clear()
        with self._lock:
            done, self._carried = self._carried, 0
        return done

    def thinking(self) -> bool:
        """Whether a turn is being thought about."""
        with self._lock:
            return bool(self._thinking)

    def start_due(self) -> int:
        """Start thinking about a due turn for each person there is room for, fairly; how
        many were started."""
        with self.factory() as session:
            due = due_turns(session, limit=None)
        if due:
            self._robot_key()  # made once, before any thread needs it
        with self._lock:
            now = self.clock()
            self.failed_until = {b: t for b, t in self.failed_until.items() if t > now}
            due = [turn for turn in due if turn.board not in self.failed_until]
            busy = set(self._thinking)
            places = self.settings.robot_turns_at_once - len(busy)
            picked = pick_fair(due, places=places, busy=busy, ledger=self.ledger, order=self.order)
            for turn in picked:
                self.order.served(turn.person)
                # A daemon: stopping never waits for a robot's thought (a turn cut short
                # loses nothing: it is thought about again).
                thread = threading.Thread(
                    target=self._think_and_play, args=(turn,), name="robot", daemon=True
                )
                self._thinking[turn.person] = thread
                thread.start()
        return len(picked)

    def _think_and_play(self, turn: RobotTurn) -> None:
        began, played, failed = time.thread_time(), False, False
        try:
            played = self.play_turn(turn)
        except Exception:
            log.exception("a robot's turn on board %s failed; trying again later", turn.board)
            failed = True
        finally:
            with self._lock:
                # This thread's own CPU, whatever the others did meanwhile.
                self.ledger.charge(turn.person, time.thread_time() - began)
                if failed:
                    self.failed_until[turn.board] = self.clock() + RETRY_AFTER_SECONDS
                self._carried += played
                del self._thinking[turn.person]
            self._ended.set()

    def play_turn(self, turn: RobotTurn) -> bool:
        """Think about one turn and carry it out; False when the board moved on meanwhile."""
        with self.factory() as session:
            board = load_turn(self._context(session), turn, for_update=False)
        if board is None:
            return False
        decision = self._decide(board, turn)
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

    def _decide(self, board: Board, turn: RobotTurn) -> Decision:
        """A move gets ``robot_cpu_seconds``; a proposal a small fixed budget, and once
        answered, the same answer until the position changes (it may be sent again and
        again)."""
        key = self._robot_key()
        if turn.task == "move":
            return decide(board, turn, self.settings.robot_cpu_seconds, key)
        position = board.row.state
        with self._lock:
            known = self.answers.get(turn, position)
        if known is not None:
            return Decision(turn, known)
        decision = decide(board, turn, self.settings.robot_proposal_cpu_seconds, key)
        with self._lock:
            self.answers.keep(turn, position, decision.answer)
        return decision

    def _robot_key(self) -> bytes:
        """The key the robots' generators are seeded under (core.robots.seeds)."""
        with self._key_lock:
            if self._key is None:
                with transaction(self.factory) as session:
                    self._key = robot_key(session)
            return self._key

    def _context(self, session: Session, now: datetime | None = None) -> CommandContext:
        """A context with no sender (no reply goes anywhere) and, to carry out a turn, one
        time for all it writes."""
        ctx = CommandContext(session=session, settings=self.settings, sender=None)
        if now is not None:
            ctx.clock = lambda: now
        return ctx
