"""Per-game knowledge for the search, one module a game: playout moves, cut-off evaluations,
candidate moves. :func:`policy_for` looks a game's policy up by ``game.SPEC.name``; a game
without one gets :data:`~pbmserv.robots.policy.DEFAULT`: uniform random playouts to the end.
"""

from __future__ import annotations

from pbmserv.games.base import AnyGame
from pbmserv.robots.policies import buffalo, chameleon, entropy, extinction, hmdg, owlman
from pbmserv.robots.policy import DEFAULT, Policy

_POLICIES: dict[str, Policy] = {
    "chameleon": chameleon.POLICY,
    "entropy": entropy.POLICY,
    "extinction": extinction.POLICY,
    "buffalo": buffalo.POLICY,
    "owlman": owlman.POLICY,
    "hmdg": hmdg.POLICY,
}


def policy_for(game: AnyGame) -> Policy:
    """The policy of ``game`` (by ``SPEC.name``), or :data:`DEFAULT`."""
    return _POLICIES.get(game.SPEC.name, DEFAULT)
