"""Monte Carlo tree search over the game contract: UCT, open loop, information-set aware.

The tree is over move sequences, not states (open-loop MCTS): every iteration starts from a
fresh ``game.determinize(state, seat, rng)`` (the state itself for games without secrets) and
re-applies the moves of the path with the search's own generator, so a chance draw is sampled
anew each time instead of frozen into a node. A node's child is available in an iteration only
when its move is legal in that iteration's state, and the UCB term counts availabilities rather
than parent visits (single-observer IS-MCTS, Cowling, Powley and Whitehouse 2012). Each node
holds the result of the seat that chose the move into it, so the opponent maximises its own
value. Children are keyed by the move itself (every game's moves are hashable values equal
across determinisations), or by its canonical text when a move is not hashable.

The search reads the position only through ``determinize``, ``to_move``, ``legal_moves``,
``apply`` and ``outcome``, and draws chance from the generator it is given: never another
seat's secrets, never the board's seed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from pbmserv.games.base import AnyGame, Outcome
from pbmserv.robots.policy import Policy, Values, sigmoid
from pbmserv.robots.tactics import DECIDED, root_scores, safe_moves

#: A playout that has not ended after this many moves is scored by the policy's evaluation (a
#: draw without one): classic Owlman has no move limit.
MAX_PLAYOUT_PLIES = 600
#: Determinisations in which a move must win at once to be played without a search.
DECISIVE_SAMPLES = 4


@dataclass(frozen=True)
class Budget:
    """How long a search may run: ``iterations`` decides (so that a seed gives one answer);
    ``cpu_seconds`` only stops a search that would run too long on a slow machine."""

    iterations: int
    cpu_seconds: float
    #: 0 plays the most visited move; above 0 a move is drawn with a chance in proportion to
    #: visits ** (1 / temperature), so a weaker level sometimes plays a lesser move, as a
    #: weaker player does (a search that is only shorter plays much the same moves).
    temperature: float = 0.0
    #: Plies the policy's tactics read before the tree search (0: none; see robots.tactics).
    tactics_depth: int = 0
    #: The share of the tactics' margin a root move may fall short of the best by and still be
    #: searched: a stronger level lets less slip.
    tactics_margin: float = 1.0


@dataclass(frozen=True)
class SearchResult:
    """The move found for ``seat`` and what the search thinks of it."""

    move: Any
    #: The mean result of ``move`` for the seat, 0 (loss) .. 1 (win).
    value: float
    #: The mean result of every iteration for the seat (the position's value).
    root_value: float
    iterations: int
    cpu_seconds: float


class Node:
    """A move sequence's statistics: ``total`` is the summed result of the seat that chose the
    move into the node, ``available`` how many times that move could have been chosen."""

    __slots__ = ("available", "bound", "children", "moves", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[Hashable, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 0
        #: The keyed moves of the node's position, kept where every iteration reaches the same
        #: position (no chance, no secrets).
        self.moves: list[tuple[Hashable, Any]] | None = None
        #: The minimax of the evaluations below (implicit minimax backups), one per seat.
        self.bound: Values | None = None


def outcome_values(outcome: Outcome, players: int) -> Values:
    """Each seat's result: 1 for a winner, 0 for a loser, 0.5 for everyone in a draw."""
    if not outcome.winners:
        return (0.5,) * players
    return tuple(1.0 if seat in outcome.winners else 0.0 for seat in range(players))


def _key(game: AnyGame, state: Any, move: Any) -> Hashable:
    try:
        hash(move)
    except TypeError:
        return game.format_move(state, move)
    return move


class Search:
    """One search for ``seat`` from ``state`` (see the module docstring)."""

    def __init__(
        self,
        game: AnyGame,
        state: Any,
        seat: int,
        policy: Policy,
        rng: random.Random,
    ) -> None:
        self.game = game
        self.state = state
        self.seat = seat
        self.policy = policy
        self.rng = rng
        self.players = game.SPEC.players
        self.root = Node()
        self.root_totals = [0.0] * self.players
        # Without chance or secrets a move sequence always leads to the same position.
        self.fixed = not (game.SPEC.uses_chance or game.SPEC.hidden_information)
        # Minimax over evaluations is sound only where a position does not vary.
        self.minimax = policy.minimax_weight if self.fixed and policy.evaluate else 0.0
        #: The root moves the tactics left to the tree (None: all of them).
        self.root_moves: set[Hashable] | None = None

    # --- the public entry point ------------------------------------------------------------

    def run(self, budget: Budget) -> SearchResult:
        """Search ``budget.iterations`` times (fewer if the CPU cap is reached first)."""
        started = time.process_time()
        done = 0
        # The tactics find a win at once themselves (at their first ply).
        reads_tactics = self.fixed and self.policy.tactics is not None and budget.tactics_depth > 0
        decisive = None if reads_tactics else self._decisive_move()
        if decisive is not None:
            return SearchResult(decisive, 1.0, 1.0, 0, time.process_time() - started)
        settled = self._read_tactics(budget.tactics_depth, budget.tactics_margin)
        if settled is not None:
            move, value = settled
            return SearchResult(move, value, value, 0, time.process_time() - started)
        while done < budget.iterations:
            if done and time.process_time() - started > budget.cpu_seconds:
                break
            self._iterate()
            done += 1
        return self._result(done, time.process_time() - started, budget.temperature)

    def _result(self, done: int, cpu: float, temperature: float = 0.0) -> SearchResult:
        root_value = self.root_totals[self.seat] / max(1, self.root.visits)
        if not self.root.children or self.seat not in self.game.to_move(self.state).seats:
            return SearchResult(None, root_value, root_value, done, cpu)
        # The most visited move (the most robust choice); a tie goes to the better mean.
        key, best = max(
            self.root.children.items(),
            key=lambda item: (item[1].visits, item[1].total / max(1, item[1].visits)),
        )
        if temperature > 0:
            key, best = self._drawn_child(temperature)
        value = best.total / max(1, best.visits)
        return SearchResult(self._root_move(key), value, root_value, done, cpu)

    def _drawn_child(self, temperature: float) -> tuple[Hashable, Node]:
        """A root child drawn with a chance in proportion to visits ** (1 / temperature)."""
        children = list(self.root.children.items())
        most = max(node.visits for _, node in children) or 1
        # Relative to the most visited, so that a small temperature cannot overflow.
        weights = [(node.visits / most) ** (1 / temperature) for _, node in children]
        return self.rng.choices(children, weights)[0]

    def _root_move(self, key: Hashable) -> Any:
        """The move of the root child ``key``, as a move of the real position."""
        for move in self.game.legal_moves(self.state, self.seat):
            if _key(self.game, self.state, move) == key:
                return move
        raise AssertionError(f"the searched move {key!r} is not legal in the position")

    # --- one iteration ---------------------------------------------------------------------

    def _decisive_move(self) -> Any:
        """A move of the seat that wins at once, else None: no search can do better, and a
        search with few iterations might miss it. With secrets, it must win in each of a few
        determinisations; with chance no sample proves a win, so the search decides."""
        game, seat = self.game, self.seat
        if game.SPEC.uses_chance or seat not in game.to_move(self.state).seats:
            return None
        samples = [
            game.determinize(self.state, seat, self.rng)
            for _ in range(DECISIVE_SAMPLES if game.SPEC.hidden_information else 1)
        ]
        moves = game.legal_moves(samples[0], seat)
        if len(moves) > self.policy.decisive_check_limit:
            return None
        for move in moves:
            if all(self._wins_at_once(sample, move) for sample in samples):
                return move
        return None

    def _read_tactics(self, depth: int, share: float) -> tuple[Any, float] | None:
        """Read the policy's tactics ``depth`` plies deep: the move and its value when they
        settle it (a forced win, or one move alone not clearly worse), else None with the
        root's moves narrowed to those within the margin of the best."""
        tactics = self.policy.tactics
        if tactics is None or depth <= 0 or not self.fixed:
            return None
        if self.seat not in self.game.to_move(self.state).seats:
            return None
        scored, _nodes = root_scores(tactics, self.state, depth)
        if not scored:
            return None
        best_move, best = max(scored, key=lambda item: item[1])
        if best > DECIDED:
            return best_move, 1.0
        kept = safe_moves(scored, tactics.margin * share)
        if len(kept) == 1:
            return kept[0], 0.0 if best < -DECIDED else sigmoid(best / tactics.scale)
        self.root_moves = {_key(self.game, self.state, move) for move in kept}
        return None

    def _wins_at_once(self, state: Any, move: Any) -> bool:
        result = self.game.outcome(self.game.apply(state, move, self.rng))
        return result is not None and result.winners == frozenset({self.seat})

    def _iterate(self) -> None:
        game, rng, policy = self.game, self.rng, self.policy
        state = game.determinize(self.state, self.seat, rng)
        node = self.root
        path: list[tuple[Node, int]] = []
        values: Values | None = None
        while values is None:
            seats = game.to_move(state).seats
            if not seats:
                values = self._ended(state)
                break
            # Simultaneous seats (none of the games has them yet) act one after the other.
            actor = self.seat if node is self.root and self.seat in seats else min(seats)
            moves = node.moves
            if moves is None:
                legal = policy.tree_moves(game, state, actor, game.legal_moves(state, actor), rng)
                moves = [(_key(game, state, move), move) for move in legal]
                if node is self.root and self.root_moves is not None:
                    moves = [(k, m) for k, m in moves if k in self.root_moves] or moves
                if self.fixed:
                    node.moves = moves
            child, move = self._select(node, moves, actor, state)
            state = game.apply(state, move, rng)
            path.append((child, actor))
            if child.visits == 0:
                values = self._playout(state)
                if self.minimax:
                    child.bound = self._bound(state, values)
            node = child
        self._back_up(path, values)

    def _back_up(self, path: Sequence[tuple[Node, int]], values: Values) -> None:
        """Count the iteration's result at the root and along its path."""
        self.root.visits += 1
        for seat in range(self.players):
            self.root_totals[seat] += values[seat]
        for child, actor in path:
            child.visits += 1
            child.total += values[actor]
        if self.minimax:
            self._back_up_bounds(path)

    def _bound(self, state: Any, values: Values) -> Values:
        """The evaluation of a new node's position (its playout's value if that was one)."""
        policy = self.policy
        if not self.game.to_move(state).seats or (policy.cutoff == 0 and policy.playout is None):
            return values
        assert policy.evaluate is not None
        return policy.evaluate(self.game, state)

    @staticmethod
    def _back_up_bounds(path: Sequence[tuple[Node, int]]) -> None:
        """Each node of the path takes the bound of the child best for the seat choosing
        there (implicit minimax backups, Lanctot et al. 2014)."""
        for index in range(len(path) - 2, -1, -1):
            node, chooser = path[index][0], path[index + 1][1]
            bounds = [c.bound for c in node.children.values() if c.bound is not None]
            if bounds:
                node.bound = max(bounds, key=lambda bound: bound[chooser])

    def _select(
        self, node: Node, moves: Sequence[tuple[Hashable, Any]], actor: int, state: Any = None
    ) -> tuple[Node, Any]:
        """The child to follow: a new one while the node may widen, else by UCB over the
        children available now."""
        children = node.children
        fresh: list[tuple[Hashable, Any]] = []
        available: list[tuple[Node, Any]] = []
        for key, move in moves:
            child = children.get(key)
            if child is None:
                fresh.append((key, move))
            else:
                child.available += 1
                available.append((child, move))
        if fresh and (not available or len(children) < self.policy.widening(node.visits)):
            key, move = self._fresh_child(fresh, actor, state)
            child = children[key] = Node()
            child.available = 1
            return child, move
        explore = self.policy.exploration
        weight = self.minimax
        best, best_move, best_score = available[0][0], available[0][1], -math.inf
        for child, move in available:
            if child.visits == 0:
                return child, move
            mean = child.total / child.visits
            if weight and child.bound is not None:
                mean = (1.0 - weight) * mean + weight * child.bound[actor]
            score = mean + explore * math.sqrt(math.log(child.available) / child.visits)
            if score > best_score:
                best, best_move, best_score = child, move, score
        return best, best_move

    def _fresh_child(
        self, fresh: list[tuple[Hashable, Any]], actor: int, state: Any
    ) -> tuple[Hashable, Any]:
        """The move a widening node takes in next (see Policy.expand and Policy.ordered)."""
        policy = self.policy
        if policy.expand is not None:
            moves = [move for _key, move in fresh]
            return fresh[policy.expand(self.game, state, actor, moves, self.rng)]
        return fresh[0] if policy.ordered else self.rng.choice(fresh)

    def _ended(self, state: Any) -> Values:
        result = self.game.outcome(state)
        assert result is not None  # nobody to move: the game is over
        return outcome_values(result, self.players)

    def _playout(self, state: Any) -> Values:
        """Play the policy's moves to the end (or its cut-off) and score the result."""
        game, policy, rng = self.game, self.policy, self.rng
        if not game.to_move(state).seats:
            return self._ended(state)
        fast = policy.playout(game, state, rng) if policy.playout is not None else None
        if fast is not None:
            return fast
        limit = MAX_PLAYOUT_PLIES if policy.cutoff is None else policy.cutoff
        for _ in range(limit):
            seats = game.to_move(state).seats
            if not seats:
                return self._ended(state)
            actor = min(seats) if len(seats) == 1 else rng.choice(sorted(seats))
            move = policy.choose(game, state, actor, game.legal_moves(state, actor), rng)
            state = game.apply(state, move, rng)
        if not game.to_move(state).seats:
            return self._ended(state)
        if policy.evaluate is not None:
            return policy.evaluate(game, state)
        return (0.5,) * self.players


def search(
    game: AnyGame,
    state: Any,
    seat: int,
    policy: Policy,
    budget: Budget,
    rng: random.Random,
) -> SearchResult:
    """Search ``state`` for ``seat`` within ``budget`` (see :class:`Search`)."""
    return Search(game, state, seat, policy, rng).run(budget)
