"""A whole position drawn from what one seat may know: determinisation for a computer player
(determinised IS-MCTS searches such positions and never reads the opponent's secrets).

The position is first reduced to a puzzle of what the seat sees and nothing else
(:mod:`pbmserv.games.hmdg.puzzle`). Only the puzzle is then searched, with the random generator
choosing among the points the public facts allow: the result depends on the seat's view and
the generator alone.

The search is depth first, over the opponent's secret turns:

1. When the opponent has announced its first five, a window of five points is chosen for it
   first: the five's own turn placed one of them, and earlier turns the others.
2. The points that must be the opponent's pieces placed in secret (those revealed in its
   answers, placed before the answer; those of the window, placed by the five's turn; after
   a pass that left the opponent no point, every point not revealed then) are each given a
   secret turn that could have placed them, the point with the fewest such turns left first.
3. The other secret turns take a point of their line that the rules allowed then and that no
   other piece of the opponent's holds.

The opponent's pending point, if secret, is chosen first, on a free point of its line. Each
placement is checked at once: no five before the announced one (none at all when none was
announced), never two fives (a win would have ended the game), no pass the log does not show;
and a secret turn left no point to take ends that branch, one left one point takes it next.
A search that goes on too long is begun again in another random order with a larger
allowance (a bad early choice can take long to find out, another order finds a placement at
once); as none is cut short forever, a placement is always found: the true one is among them.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple

from pbmserv.games.hmdg.geometry import (
    _FIVE_STARTS,
    _THROUGH,
    FULL,
    _double_five_among,
    _five_masks,
    _fives_through,
    double_five,
    mask_of,
    points_of,
)
from pbmserv.games.hmdg.puzzle import _NEVER, Puzzle, drawn_state, puzzle
from pbmserv.games.hmdg.state import HmdgState

#: Placements a search may try before it begins again (plus two a secret turn).
_FIRST_ALLOWANCE = 40


def solve(problem: Puzzle, rng: random.Random) -> tuple[tuple[int, ...], int | None]:
    """A point for each secret turn (in the order of ``problem.secrets``) and the pending point
    (None when not secret), drawn with ``rng`` among those the public facts allow."""
    return _Plan(problem).solve(rng)


#: The puzzle of the position last determinised, with its plan: a computer player draws
#: from the same position many times over. Kept by identity (one entry, replaced whole); the
#: plan keeps only what follows from the puzzle, so a draw never depends on earlier draws.
_last: list[tuple[HmdgState, int, Puzzle, _Plan]] = []


def determinized(state: HmdgState, side: int, rng: random.Random) -> HmdgState:
    """``state`` with the secrets of ``side`` (the viewer's opponent) drawn anew from what the
    viewer sees and ``rng``; ``state`` itself when it has none."""
    last = _last[0] if _last else None
    if last is not None and last[0] is state and last[1] == side:
        problem, plan = last[2], last[3]
    else:
        problem = puzzle(state, side)
        plan = _Plan(problem)
        _last[:] = [(state, side, problem, plan)]
    if not problem.has_secrets:
        return state  # the viewer sees all of it
    points, pending = plan.solve(rng)
    return drawn_state(problem, points, pending)


# --- the search ------------------------------------------------------------------------------


def _shuffled(items: list[int], rng: random.Random) -> Iterator[int]:
    """``items`` in a random order, drawn lazily: most searches take the first."""
    if len(items) <= 1:
        yield from items
        return
    first = rng.randrange(len(items))
    yield items[first]
    rest = items[:first] + items[first + 1 :]
    rng.shuffle(rest)
    yield from rest


def _completing(mask: int) -> int:
    """The points that would give ``mask`` a line of five: in each direction, the lines that
    hold all their points but one (shifting the whole board, as geometry._five_masks does)."""
    found = 0
    for step, starts in _FIVE_STARTS:
        shifted = [mask >> k * step for k in range(5)]
        # heads[k]: the lines (by first point) holding their points 0..k-1; tail: k+1..4.
        heads = [starts]
        for k in range(4):
            heads.append(heads[-1] & shifted[k])
        tail = starts
        for k in range(4, -1, -1):
            found |= (heads[k] & tail & ~shifted[k]) << k * step
            tail &= shifted[k]
    return found


_THROUGH_MASKS: Final = tuple(tuple(w.mask for w in windows) for windows in _THROUGH)


def _completing_through(mask: int, point: int) -> int:
    """The points that would complete a line of five through ``point`` (one of ``mask``)."""
    found = 0
    for window in _THROUGH_MASKS[point]:
        missing = window & ~mask
        if not missing & (missing - 1):
            found |= missing
    return found


def _matchable(must: dict[int, int]) -> bool:
    """Whether each point can have a secret turn of its own among those it lists (a bipartite
    matching by augmenting paths): the search would find out only after trying every way."""
    owner: dict[int, int] = {}  # secret turn -> point

    def claim(point: int, seen: set[int]) -> bool:
        for index in points_of(must[point]):
            if index not in seen:
                seen.add(index)
                if index not in owner or claim(owner[index], seen):
                    owner[index] = point
                    return True
        return False

    return all(claim(point, set()) for point in must)


class _OutOfTime(Exception):
    """A search has tried its allowance of placements."""


class _Held(NamedTuple):
    """The opponent's pieces during a search: all of them, those placed before its first five
    (all, when none was announced) and those placed by it; and the points that would give
    the pieces before the five a five (no turn before it may take them)."""

    every: int
    before: int
    by_five: int
    early: int


@dataclass(frozen=True)
class _Window:
    """What a search must place for one choice of window for the first five."""

    #: Points that must be the opponent's pieces placed in secret, each with the secret turns
    #: (a mask) that could have placed it.
    must: dict[int, int]
    must_mask: int
    #: The points of ``must`` that only turns before the five can place.
    early_must: int
    #: Per secret turn, the points of ``must`` it may take.
    can_cover: list[int]
    #: Per secret turn, the other points it may take.
    fill_choices: list[int]


class _Plan:
    """What the searches of one puzzle need, worked out once. Secret turns are numbered by
    their place in ``problem.secrets``; a set of them is a bit mask of those numbers."""

    def __init__(self, problem: Puzzle) -> None:
        self.problem = problem
        self.turns = [secret.turn for secret in problem.secrets]  # in order
        self.choices = [secret.choices for secret in problem.secrets]
        #: Per point, the secret turns whose line may hold it.
        self.holders = [0] * FULL.bit_length()
        for index, choices in enumerate(self.choices):
            for point in points_of(choices):
                self.holders[point] |= 1 << index
        five = problem.five_turn
        self.before_five = self.turns_before(five)
        # The points revealed in answers are placed only as points to cover (step 2).
        reserved = mask_of(p for p, _ in problem.revealed_later)
        self.fill_choices = [choices & ~reserved for choices in self.choices]
        self.fill_order = sorted(
            range(len(self.turns)), key=lambda i: (self.fill_choices[i].bit_count(), i)
        )
        self.covers = {p: self.placers(p, turn) for p, turn in problem.revealed_later}
        for rule in problem.passes:
            if rule.full:
                # The opponent had no point left: each point not revealed then was one of its
                # pieces placed in secret by then.
                for point in points_of(FULL & ~rule.known & ~rule.revealed):
                    placers = self.placers(point, rule.turn + 1)
                    self.covers[point] = self.covers.get(point, placers) & placers
        #: The secret turn that made the first five, if its point is secret.
        self.five_index = next((i for i, turn in enumerate(self.turns) if turn == five), None)
        before = mask_of(p for t, p in problem.known if t < five)
        self.start = _Held(
            mask_of(p for _, p in problem.known),
            before,
            mask_of(p for t, p in problem.known if t <= five),
            _completing(before),
        )
        # Passes that say the opponent had a point left, with the points it would have had to
        # hold in secret to have none: more pieces can only break them, so they are checked
        # with each placement; the others once all are placed.
        self.left_free = [
            (rule, FULL & ~rule.known & ~rule.revealed) for rule in problem.passes if not rule.full
        ]
        self._windows: dict[int, _Window | None] = {}

    def turns_before(self, deadline: int) -> int:
        """The secret turns before turn ``deadline`` (the first ones: they are in order)."""
        return (1 << bisect_left(self.turns, deadline)) - 1

    def placers(self, point: int, deadline: int) -> int:
        """The secret turns before ``deadline`` that could have placed ``point``."""
        return self.holders[point] & self.turns_before(deadline)

    def window(self, window: int) -> _Window | None:
        """What the search must place when the first five is on ``window`` (0: no five
        announced); None if the points to cover cannot each have a secret turn of their own.
        Worked out once a window."""
        if window in self._windows:
            return self._windows[window]
        must = dict(self.covers)
        fill_choices = self.fill_choices
        if window and self.five_index is not None:
            # The five is new at its turn, so that turn's point is one of the window's: the
            # turn covers a point of the window and nothing else.
            for point in must:
                if not window >> point & 1:
                    must[point] &= ~(1 << self.five_index)
            fill_choices = list(fill_choices)
            fill_choices[self.five_index] = 0
        for point in points_of(window & ~self.start.by_five):
            placers = self.placers(point, self.problem.five_turn + 1)
            must[point] = must.get(point, placers) & placers
        early_must = mask_of(p for p, turns in must.items() if not turns & ~self.before_five)
        found = None
        # The points to cover will be pieces, so with the known ones they may not hold two
        # fives, nor a five before the first one.
        if (
            not _five_masks(self.start.before | early_must)
            and not _double_five_among(_five_masks(self.start.every | mask_of(must)))
            and _matchable(must)
        ):
            can_cover = [0] * len(self.turns)
            for point, placers in must.items():
                for index in points_of(placers):
                    can_cover[index] |= 1 << point
            found = _Window(must, mask_of(must), early_must, can_cover, fill_choices)
        self._windows[window] = found
        return found

    def solve(self, rng: random.Random) -> tuple[tuple[int, ...], int | None]:
        """See :func:`solve`. The search is cut short after some placements and begun again
        in another random order with a larger allowance: a depth-first search that went wrong
        early can take long to find out, while another order finds a placement at once. A
        window for the five proved impossible is not tried again, and none is left untried,
        so a placement is always found (the true one is among them)."""
        windows = list(self.problem.windows) or [0]
        allowance = _FIRST_ALLOWANCE + 2 * len(self.turns)
        while windows:
            unsettled = []
            for window in _shuffled(windows, rng):
                search = _Search(self, rng, allowance)
                found = search.run(window)
                if found:
                    return tuple(search.points), search.pending
                if found is None:
                    unsettled.append(window)
            windows = unsettled
            allowance *= 4
        raise ValueError("hmdg: no placement of the hidden pieces agrees with the public facts")


class _Search:
    """One depth-first search of a plan, allowed ``allowance`` placements. The pieces placed
    (:class:`_Held`), the points taken (``used``), the secret turns given one (``given``, a
    mask) and the points still to cover are passed down, so that backtracking needs no undo.
    """

    def __init__(self, plan: _Plan, rng: random.Random, allowance: int) -> None:
        self.plan = plan
        self.rng = rng
        self.left = allowance
        self.points = [-1] * len(plan.turns)
        self.pending: int | None = None
        self.window = _Window({}, 0, 0, [], [])

    def run(self, window: int) -> bool | None:
        """Search with the first five on ``window`` (0: no five announced): whether a placement
        was found (in ``points`` and ``pending``), None if not within the allowance."""
        try:
            return self._run(window)
        except _OutOfTime:
            return None

    def _run(self, window: int) -> bool:
        plan, problem = self.plan, self.plan.problem
        found = plan.window(window)
        if found is None:
            return False  # more points to cover than turns that could place them
        self.window = found
        if not problem.pending_line:
            return self._cover(found.must_mask, 0, plan.start, 0)
        # The pending point first: no piece of the opponent's may stand there, and its line
        # may have only one point left for it.
        options = problem.pending_line & ~problem.skeleton.revealed & ~window
        for pending in _shuffled(points_of(options), self.rng):
            self.pending = pending
            used = 1 << pending
            forced = self._squeeze(plan.holders[pending], found.must_mask, 0, used, plan.start)
            if forced is not None and self._cover(found.must_mask, 0, plan.start, used, forced):
                return True
        return False

    def _place_at(self, index: int, point: int, held: _Held) -> _Held | None:
        """The pieces with secret turn ``index`` on ``point``, or None if that breaks the
        fives (a five before the first one announced, or any five when none was; two fives, a
        win that would have ended the game) or leaves the opponent no point where a pass says
        it had one."""
        self.left -= 1
        if self.left < 0:
            raise _OutOfTime
        plan = self.plan
        turn = plan.turns[index]
        bit = 1 << point
        every, before, by_five, early = held
        every |= bit
        five = plan.problem.five_turn
        if turn < five:
            if early & bit:
                return None
            before |= bit
            early |= _completing_through(before, point)
        if five != _NEVER and _fives_through(every, point) and double_five(every, point):
            return None
        if turn <= five:
            by_five |= bit
        for rule, open_points in plan.left_free:
            if (
                rule.turn >= turn
                and open_points & bit
                and not open_points & ~self._held_after(rule.turn) & ~bit
            ):
                return None
        return _Held(every, before, by_five, early)

    def _held_after(self, turn: int) -> int:
        """The points placed so far by secret turns up to ``turn``."""
        held = 0
        for placed_at, point in zip(self.plan.turns, self.points, strict=True):
            if point >= 0 and placed_at <= turn:
                held |= 1 << point
        return held

    def _ways(self, index: int, used: int, to_cover: int, early: int) -> int:
        """The points secret turn ``index`` may still take: a point still to cover only if it
        could have placed it; none that would make a five too early."""
        window = self.window
        ways = window.fill_choices[index] & ~used & ~to_cover | window.can_cover[index] & to_cover
        return ways & ~early if self.plan.before_five >> index & 1 else ways

    def _cover(self, to_cover: int, given: int, held: _Held, used: int, forced: int = 0) -> bool:
        """Steps 2 and 3: a secret turn left only one way to go (``forced``) takes it first;
        then each point still ``to_cover`` is given one of the secret turns that could have
        placed it, the point with the fewest left first; then the other turns take a point,
        the turn with the fewest left first (``given``: the turns given a point)."""
        while forced:
            index = (forced & -forced).bit_length() - 1
            forced &= forced - 1
            if not given >> index & 1:
                ways = self._ways(index, used, to_cover, held.early)
                return any(
                    self._take(index, point, to_cover, given, held, used, forced)
                    for point in points_of(ways)
                )
        if to_cover:
            if to_cover & self.window.early_must & held.early:
                return False  # a point to cover would make a five too early, whoever takes it
            point, placers, count = -1, 0, len(self.points) + 1
            for candidate in points_of(to_cover):
                left = self.window.must[candidate] & ~given
                if left.bit_count() < count:
                    point, placers, count = candidate, left, left.bit_count()
                    if count <= 1:
                        break
            if not placers or used >> point & 1:  # none left, or the pending point
                return False
            return any(
                self._take(index, point, to_cover, given, held, used, 0)
                for index in _shuffled(points_of(placers), self.rng)
            )
        # The rest in a fixed order, the fewest choices first: a turn left one way or none
        # is seen as soon as it is (_squeeze), so no count is needed at each step.
        index = next((i for i in self.plan.fill_order if not given >> i & 1), -1)
        if index < 0:
            return self._finish(held.by_five)
        ways = self._ways(index, used, 0, held.early)
        return any(
            self._take(index, point, 0, given, held, used, 0)
            for point in _shuffled(points_of(ways), self.rng)
        )

    def _take(
        self, index: int, point: int, to_cover: int, given: int, held: _Held, used: int, forced: int
    ) -> bool:
        """Secret turn ``index`` on ``point``, and the search goes on from there; False if it
        breaks a rule or leaves another secret turn no way to go, else whether the search
        found a placement."""
        placed = self._place_at(index, point, held)
        if placed is None:
            return False
        bit = 1 << point
        to_cover &= ~bit
        given |= 1 << index
        used |= bit
        # Only the turns whose line holds the point can lose a way; and those before the five
        # when the point gives the pieces before it a line of four.
        squeezed = self.plan.holders[point]
        if placed.early != held.early:
            squeezed |= self.plan.before_five
        more = self._squeeze(squeezed, to_cover, given, used, placed)
        if more is None:
            return False
        self.points[index] = point
        if self._cover(to_cover, given, placed, used, forced | more):
            return True
        self.points[index] = -1
        return False

    def _squeeze(self, turns: int, to_cover: int, given: int, used: int, held: _Held) -> int | None:
        """Of ``turns`` (a mask), those not given a point and left one way to go (a mask), or
        None if one is left none."""
        forced = 0
        for index in points_of(turns & ~given):
            ways = self._ways(index, used, to_cover, held.early)
            if not ways:
                return None
            if not ways & (ways - 1):
                forced |= 1 << index
        return forced

    def _finish(self, by_five: int) -> bool:
        """Once every secret turn has a point: the first five is there, and the passes that
        say the opponent had no point left are as logged."""
        problem = self.plan.problem
        if problem.five_turn != _NEVER and not _five_masks(by_five):
            return False
        for rule in problem.passes:
            held = rule.known | self._held_after(rule.turn)
            if rule.full and FULL & ~held & ~rule.revealed:
                return False
        return True
