"""Conformance kit: generic checks that every registered game must pass.

The checks use only the contract in :mod:`pbmserv.games.base`, so a new game (with chance,
hidden information, several stages or simultaneous turns) gets all of them by being registered.
Randomness follows the server: ``random.Random(seed)`` for ``new_game`` and
:func:`~pbmserv.games.base.move_rng` ``(seed, ply)`` for the move at ``ply``, where ``ply``
counts the moves applied since the start. Every failure raises :class:`ConformanceError`
with a message naming the game, options, seed and ply.

Entry points: :func:`check_conformance` runs everything for one game; the ``check_*``
functions run one part; :func:`random_playout` and :func:`replay` are useful on their own.
"""

from __future__ import annotations

from pbmserv.games.base import move_rng
from pbmserv.games.testing.kit import (
    DEFAULT_MAX_PLIES,
    GARBAGE_INPUTS,
    ConformanceError,
    Playout,
    Step,
    option_sets,
    viewers,
)
from pbmserv.games.testing.playing import random_playout, replay
from pbmserv.games.testing.positions import (
    check_determinize,
    check_garbage,
    check_hidden,
    check_nothing_to_determinize,
    check_position,
)
from pbmserv.games.testing.static import check_options, check_spec
from pbmserv.games.testing.whole_games import (
    check_conformance,
    check_playout,
    check_repeated_moves,
    check_replay,
    check_texts_read_back,
)

__all__ = [
    "DEFAULT_MAX_PLIES",
    "GARBAGE_INPUTS",
    "ConformanceError",
    "Playout",
    "Step",
    "check_conformance",
    "check_determinize",
    "check_garbage",
    "check_hidden",
    "check_nothing_to_determinize",
    "check_options",
    "check_playout",
    "check_position",
    "check_replay",
    "check_repeated_moves",
    "check_spec",
    "check_texts_read_back",
    "move_rng",
    "option_sets",
    "random_playout",
    "replay",
    "viewers",
]
