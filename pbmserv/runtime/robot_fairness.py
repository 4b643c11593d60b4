"""Sharing the robots' time fairly between the people they play (runtime.robot_runner).

One person's robot boards must not hold up everyone else's (issue 48: another person's robot1
reply went from 0.5 s to 65 s behind twelve robot3 boards of one player). So:

- round robin by person: each person has at most one turn being thought about at a time, and
  the next free place goes to the person served longest ago (:func:`pick_fair`); a person is
  an address (core.robots.turns.RobotTurn.person), so several user ids at one address are one;
- a CPU budget per person per hour (:class:`CpuLedger`): once a person's robot turns took
  that much CPU in the last hour, their turns wait (they are not lost) until the hour frees
  some. The ledger is kept in the robots' process alone: there is one such process (the first
  worker's), so it is fair between everyone it serves, it costs no write per turn, and a
  restart, which no player can cause, forgives at most an hour's budget;
- a proposal is answered from the last answer until the position changes
  (:class:`ProposalAnswers`), and is thought about with a small fixed budget of its own
  (``robot_proposal_cpu_seconds``), so re-sending one costs nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pbmserv.core.robots.turns import RobotTurn

#: The window of the CPU budget.
HOUR_SECONDS = 3600.0


@dataclass
class CpuLedger:
    """CPU seconds each person's robot turns took, over the last hour (clock: monotonic)."""

    per_hour: float
    clock: Callable[[], float]
    _spent: dict[str, deque[tuple[float, float]]] = field(default_factory=dict)

    def charge(self, person: str, cpu_seconds: float) -> None:
        self._spent.setdefault(person, deque()).append((self.clock(), cpu_seconds))

    def spent(self, person: str) -> float:
        """The CPU seconds charged to ``person`` in the last hour."""
        entries = self._spent.get(person)
        if entries is None:
            return 0.0
        since = self.clock() - HOUR_SECONDS
        while entries and entries[0][0] <= since:
            entries.popleft()
        if not entries:
            del self._spent[person]
            return 0.0
        return sum(seconds for _at, seconds in entries)

    def may_think(self, person: str) -> bool:
        """Whether ``person`` has budget left this hour (a turn may overrun it by one turn's
        CPU at most: it is charged when it ends)."""
        return self.spent(person) < self.per_hour


@dataclass
class RoundRobin:
    """Which person was served when (a count, not a time: only the order matters)."""

    _served: dict[str, int] = field(default_factory=dict)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def served(self, person: str) -> None:
        self._served[person] = next(self._counter)

    def last_served(self, person: str) -> int:
        return self._served.get(person, 0)


def pick_fair(
    due: Iterable[RobotTurn],
    *,
    places: int,
    busy: set[str],
    ledger: CpuLedger,
    order: RoundRobin,
) -> list[RobotTurn]:
    """The turns to think about now: one each for up to ``places`` people who have no turn
    being thought about (``busy``) and budget left, the person served longest ago first.
    ``due`` is in each person's own order (core.robots.turns.due_turns: answers, then the longest
    waiting moves)."""
    first: dict[str, RobotTurn] = {}
    for turn in due:
        if turn.person not in first and turn.person not in busy:
            first[turn.person] = turn
    ready = [person for person in first if ledger.may_think(person)]
    ready.sort(key=order.last_served)  # stable: among equals, the longest waiting turn first
    return [first[person] for person in ready[: max(places, 0)]]


class ProposalAnswers:
    """A robot's last answer to each proposal, kept until the position changes: the key is
    the board, the seat, the kind of proposal and a digest of the board's state."""

    def __init__(self, most: int = 4096) -> None:
        self._answers: OrderedDict[tuple[int, int, str, bytes], str] = OrderedDict()
        self._most = most

    @staticmethod
    def _key(turn: RobotTurn, state: object) -> tuple[int, int, str, bytes]:
        # The stored state (GameRow.state, JSON): the same text for the same position.
        text = json.dumps(state, sort_keys=True, default=str)
        return (turn.board, turn.seat, turn.task, hashlib.sha256(text.encode()).digest())

    def get(self, turn: RobotTurn, state: object) -> str | None:
        return self._answers.get(self._key(turn, state))

    def keep(self, turn: RobotTurn, state: object, answer: str) -> None:
        key = self._key(turn, state)
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self._most:
            self._answers.popitem(last=False)
