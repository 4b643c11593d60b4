"""Entropy (Eric Solomon, 1977) and its deterministic variant Entropy II (Luca Cerrato).

Two roles: Chaos places counters, Order slides them like rooks to build palindromes in the rows
and columns (scored by :mod:`pbmserv.games.entropy.score`). A game is two rounds with the roles
exchanged; the higher score as Order wins. Sizes: 7x7 with 7 colours x 7 counters, or 5x5
(Hyle) with 5 x 5.

Standard Entropy draws every counter from a bag with the generator the server passes in: the
first in ``new_game``, the next one in the ``apply`` of the Order move before it (so Order moves
without knowing it) and the first of round 2 in the ``apply`` of round 1's last placement. The
drawn colour is part of the state and of Chaos's move text (``c3 R``), so a replay is exact.

Under ``-variant=entropy2`` there is no bag: a round opens with Order stocking Chaos's reserve
with 5 counters (``stock RRGBY``), Chaos places one of its choice (``c3 R``), and every Order
move hands one more over while the supply lasts (``c3-c6 give R``, ``pass give R``).

Seats: the first-named player (seat 0) makes the first move of the game, as everywhere on the
server. In standard Entropy that is Chaos's placement, so seat 0 is Chaos in round 1; under
``entropy2`` a round opens with Order's stocking, so seat 0 is Order in round 1. The roles swap
for round 2.

Squares are named like chess squares: columns ``a..`` from the left, rows ``1..`` from the
bottom. A board is stored as ``bytes``, one colour code per square (0 empty), row 1 first.

The package, by seam: ``state`` (moves, the state, squares and colours), ``rules`` (legality,
applying moves, the result), ``prompts`` (what the player to move is asked, with a legal
example), ``notation`` (reading moves as players write them), ``diagram``, ``storage`` (loading
a stored state field by field), ``score`` (palindrome scoring) and ``game`` (the contract).
"""

from __future__ import annotations

from pbmserv.games.entropy.game import GAME

__all__ = ["GAME"]
