"""bench/ratings.py predicts each game with both systems and rates it as the server does: its
replay of a real database ends where the server's ratings stand."""

from __future__ import annotations

import pytest

from pbmserv.db.models import Rating
from tests.bench_scripts import load_bench
from tests.core.client import Client

pytestmark = pytest.mark.db


def test_replaying_a_database_ends_at_the_servers_ratings(players: Client, engine) -> None:  # type: ignore[no-untyped-def]
    secret = {"alice": "alice secret1", "bob": "Bob hunter22", "carol": "carol pass3333"}
    boards = [("alice", "bob"), ("carol", "bob"), ("alice", "carol")]
    for board, (winner, loser) in enumerate(boards, start=1):
        assert players.run(f"owlman challenge {winner} {loser}", sender=f"{winner}@example.org").ok
        assert players.run(f"owlman resign {board} {secret[loser]}", sender=f"{loser}@x.org").ok
    assert players.run("extinction challenge alice bob").ok
    assert players.run("extinction propose 4 alice secret1 draw").ok
    assert players.run("extinction accept 4 Bob hunter22", sender="bob@example.org").ok
    bench = load_bench("ratings")
    replayed = bench.from_database(
        engine.url.render_as_string(hide_password=False), players.settings.rating_period_days
    )
    assert replayed.elo_score.games == replayed.glicko_score.games == 4
    stored = players.query(
        Rating.__table__.select().with_only_columns(
            Rating.game, Rating.user_id, Rating.rating, Rating.glicko, Rating.glicko_rd
        )
    )
    assert len(stored) == 5
    for game, uid, elo, glicko, rd in stored:
        assert replayed.elo[(game, uid)] == pytest.approx(elo)
        value, _ = replayed.glicko[(game, uid)]
        assert (value.rating, value.rd) == pytest.approx((glicko, rd))


def test_on_a_synthetic_season_glicko2_predicts_better_than_elo() -> None:
    season = load_bench("ratings").league(seed=3, period_days=7.0)
    assert season.elo_score.games > 3000
    assert season.glicko_score.mean_log_loss < season.elo_score.mean_log_loss
