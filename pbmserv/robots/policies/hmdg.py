"""The robots' policy for Hidden Move Double Gomoku.

Evaluated on the searching seat's determinisation (a full state): the windows of five each side
could still fill (none of the other side's revealed pieces in them), weighted steeply by the
pieces already there. Playouts are six uniform random moves, then that evaluation; both are
done on bit masks (:mod:`pbmserv.robots.policies.hmdg_fast`), with the same results as through
the game contract at a fraction of the cost. An iteration costs about a third of what it did
(the search's own bookkeeping, its determinisations and its tree moves are most of what is
left), so each level does 2.2 times the iterations in no more CPU a move than before (measured
over positions from robot games: L1 110 iterations, L2 880, L3 7040).
"""

from __future__ import annotations

from pbmserv.robots.policies.hmdg_fast import PLAYOUT_PLIES, evaluate_position, fast_playout
from pbmserv.robots.policy import Policy

POLICY = Policy(
    evaluate=evaluate_position, cutoff=PLAYOUT_PLIES, playout=fast_playout, iteration_scale=2.2
)
