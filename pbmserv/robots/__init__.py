"""Computer players: one Monte Carlo tree search over the game contract, in three strengths.

``levels`` is the public entry point (:func:`~pbmserv.robots.levels.robot_move`,
:func:`~pbmserv.robots.levels.robot_value`), handed a seat's view (``view``), never a full
state; ``mcts`` the search; ``policies`` what the search
knows of each game; ``baselines`` the random and greedy players the robots are measured against.
Pure modules: no I/O, no database, no mail.
"""

from __future__ import annotations

from pbmserv.robots.levels import LEVELS, Choice, robot_move, robot_value
from pbmserv.robots.view import SeatView, seat_view

__all__ = ["LEVELS", "Choice", "SeatView", "robot_move", "robot_value", "seat_view"]
