"""The pure core of the tournament manager (SPEC section 5): pairings, standings, poly-ludic play.

Nothing here touches the database or the mail: plain values go in (player ids, seed order,
past rounds, results) and immutable values come out. The service that stores tournaments,
creates their boards and mails pairings and standings is built on these functions.

- :mod:`.pairing`: ``Pairing`` (who moves first), ``RoundPairing`` (a round and its byes), the
  first-move balancing rule, ``match_games`` for matches of several games.
- :mod:`.knockout`: ``knockout_bracket`` and the ``Knockout`` state (seeding, byes, repechage).
- :mod:`.roundrobin`: ``berger_rounds`` (single or double round robin, FIDE Berger tables).
- :mod:`.swiss`: ``swiss_pairings`` (Swiss and Italo-Swiss by a global matching).
- :mod:`.standings`: ``MatchResult``, ``compute_standings`` with Buchholz or Sonneborn-Berger.
- :mod:`.polyludic`: ``polyludic_rules``, a player's ``Playability`` table, ``choose_game``.
- :mod:`.formats`: the format names and the tie-break each one uses.
"""

from pbmserv.tournaments.formats import Format, parse_format
from pbmserv.tournaments.knockout import (
    Bye,
    Knockout,
    KnockoutRound,
    knockout_bracket,
    standard_seed_order,
)
from pbmserv.tournaments.pairing import (
    Pairing,
    PairingError,
    PlayerId,
    RoundPairing,
    first_move_histories,
    match_games,
)
from pbmserv.tournaments.polyludic import (
    Playability,
    PolyludicError,
    PolyludicRules,
    choose_game,
    polyludic_rules,
)
from pbmserv.tournaments.roundrobin import berger_rounds, berger_table
from pbmserv.tournaments.standings import (
    MatchResult,
    Standing,
    Tiebreak,
    compute_standings,
    game_result,
    match_result,
)
from pbmserv.tournaments.swiss import ITALO, SWISS, swiss_pairings

__all__ = [
    "ITALO",
    "SWISS",
    "Bye",
    "Format",
    "Knockout",
    "KnockoutRound",
    "MatchResult",
    "Pairing",
    "PairingError",
    "Playability",
    "PlayerId",
    "PolyludicError",
    "PolyludicRules",
    "RoundPairing",
    "Standing",
    "Tiebreak",
    "berger_rounds",
    "berger_table",
    "choose_game",
    "compute_standings",
    "first_move_histories",
    "game_result",
    "knockout_bracket",
    "match_games",
    "match_result",
    "parse_format",
    "polyludic_rules",
    "standard_seed_order",
    "swiss_pairings",
]
