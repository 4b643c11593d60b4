"""What players get besides their moves: pictures in board mail, the digest, ratings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlaySettings:
    # Board mail with a picture of the board for the users who take it (mail=html, the
    # default). Drawing one costs 0.2-1 ms of CPU (bench/pictures.py), in the delivery process.
    board_pictures: bool = True
    # The hour (0-23, UTC) at which the daily digests go out, to the users who chose them.
    digest_hour: int = 7
    # Glicko-2's rating period, in days: a player's rating deviation grows by one period's
    # volatility for each period (fractions counted) since their last rated board.
    rating_period_days: float = 7.0
