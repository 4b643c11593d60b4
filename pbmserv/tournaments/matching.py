"""Perfect matchings in order of weight, best first (Murty's partition over networkx).

``best_matching`` returns the heaviest perfect matching that passes ``accept``. It asks networkx's
maximum-weight matching for the best one, and if ``accept`` refuses it, splits the remaining
matchings into parts that each force some of its pairs in and one out (Murty, 1968), so every
matching is met at most once and heavier ones first.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping

Edge = tuple[int, int]
Matching = frozenset[Edge]


def best_matching(
    vertices: int,
    weights: Mapping[Edge, int],
    accept: Callable[[Matching], bool],
    tries: int = 200,
) -> Matching | None:
    """The heaviest perfect matching of ``vertices`` vertices over the edges of ``weights``
    (keys (a, b) with a < b) that ``accept`` takes; None if none is found in ``tries`` tries."""
    counter = itertools.count()  # ties pop in the order they were found: deterministic
    heap: list[tuple[int, int, Matching, frozenset[Edge], frozenset[Edge]]] = []

    def push(forced_in: frozenset[Edge], forced_out: frozenset[Edge]) -> None:
        found = _best_perfect(vertices, weights, forced_in, forced_out)
        if found is not None:
            weight, matching = found
            heapq.heappush(heap, (-weight, next(counter), matching, forced_in, forced_out))

    push(frozenset(), frozenset())
    while heap and tries > 0:
        tries -= 1
        _, _, matching, forced_in, forced_out = heapq.heappop(heap)
        if accept(matching):
            return matching
        free = sorted(matching - forced_in)
        for i, edge in enumerate(free):
            push(forced_in | frozenset(free[:i]), forced_out | {edge})
    return None


def _best_perfect(
    vertices: int,
    weights: Mapping[Edge, int],
    forced_in: frozenset[Edge],
    forced_out: frozenset[Edge],
) -> tuple[int, Matching] | None:
    """The heaviest perfect matching containing ``forced_in`` and none of ``forced_out``."""
    import networkx as nx  # 20 MB a process: loaded by the one that pairs a Swiss round

    taken = {v for edge in forced_in for v in edge}
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(v for v in range(vertices) if v not in taken)
    graph.add_weighted_edges_from(
        (a, b, w)
        for (a, b), w in weights.items()
        if a not in taken and b not in taken and (a, b) not in forced_out
    )
    chosen = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(chosen) != graph.number_of_nodes():
        return None
    matching = forced_in | {(min(a, b), max(a, b)) for a, b in chosen}
    return sum(weights[edge] for edge in matching), frozenset(matching)
