"""Migrations on a real, empty database of each engine: they build exactly the models' schema,
and an upgrade keeps the data already stored."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, text

from pbmserv.core.ratings.history import fill_glicko
from pbmserv.db.engine import make_engine
from pbmserv.db.migrate import current_revision, head_revision, upgrade
from pbmserv.db.models import Base
from tests.conftest import _engine_kind, _postgres_base, _schema_url

pytestmark = pytest.mark.db


@pytest.fixture
def empty_engine(tmp_path: Path) -> Iterator[Engine]:
    """A database with no tables at all (a private schema on PostgreSQL)."""
    if _engine_kind() == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
        yield engine
        engine.dispose()
        return
    schema = f"pbmmig_{uuid.uuid4().hex[:10]}"
    admin = make_engine(_postgres_base())
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(_schema_url(schema))
    yield engine
    engine.dispose()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def test_head_schema_equals_the_models(empty_engine: Engine) -> None:
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert differences == []
    assert current_revision(empty_engine) == head_revision()


def test_upgrade_from_the_first_revision_keeps_moves(empty_engine: Engine) -> None:
    upgrade(empty_engine, "0001")
    with empty_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO games (id, game, options, seed, status, ply, to_move, state,"
                " state_version, version, created_at, updated_at) VALUES (1, 'chameleon', '{}',"
                " 7, 'active', 1, '1', '{}', 1, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO moves (game_id, ply, seat, kind, text, created_at)"
                " VALUES (1, 0, 0, 'move', 'c3x', CURRENT_TIMESTAMP)"
            )
        )
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        rows = conn.execute(text("SELECT text, public_text FROM moves")).all()
    assert [tuple(r) for r in rows] == [("c3x", None)]


def test_extinction_draw_moves_become_history_entries(empty_engine: Engine) -> None:
    upgrade(empty_engine, "0006")
    with empty_engine.begin() as conn:
        for board, game in ((1, "extinction"), (2, "owlman")):
            conn.execute(
                text(
                    "INSERT INTO games (id, game, options, seed, status, ply, to_move, state,"
                    " state_version, version, created_at, updated_at) VALUES (:id, :game, '{}',"
                    " 7, 'active', 3, '1', '{}', 1, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"id": board, "game": game},
            )
            for ply, (seat, move) in enumerate([(0, "e4"), (0, "draw offer"), (1, "e5")]):
                conn.execute(
                    text(
                        "INSERT INTO moves (game_id, ply, seat, kind, text, created_at)"
                        " VALUES (:board, :ply, :seat, 'move', :move, CURRENT_TIMESTAMP)"
                    ),
                    {"board": board, "ply": ply, "seat": seat, "move": move},
                )
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        rows = conn.execute(text("SELECT game_id, kind, text FROM moves ORDER BY id")).all()
        plies = dict(conn.execute(text("SELECT id, ply FROM games")).all())
    assert [tuple(r) for r in rows] == [
        (1, "move", "e4"),
        (1, "propose", "proposes a draw"),
        (1, "move", "e5"),
        (2, "move", "e4"),
        (2, "move", "draw offer"),  # another game's moves are its own business
        (2, "move", "e5"),
    ]
    assert plies == {1: 2, 2: 3}


def test_addresses_stored_before_confirmation_existed_count_as_confirmed(
    empty_engine: Engine,
) -> None:
    upgrade(empty_engine, "0013")
    with empty_engine.begin() as conn:
        for uid, userid, email in ((1, "ann", "Ann@Example.org"), (2, "gone", "")):
            conn.execute(
                text(
                    "INSERT INTO users (id, userid, display_id, full_name, email, password_hash,"
                    " disabled, created_at, mail_format, digest) VALUES (:id, :userid, :userid,"
                    " '', :email, 'x', false, CURRENT_TIMESTAMP, 'html', 'off')"
                ),
                {"id": uid, "userid": userid, "email": email},
            )
        conn.execute(text("INSERT INTO user_addresses VALUES ('ann@work.example', 1)"))
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        rows = conn.execute(
            text("SELECT address FROM addresses WHERE confirmed_at IS NOT NULL ORDER BY address")
        ).all()
    assert [r[0] for r in rows] == ["ann@example.org", "ann@work.example"]


def test_ratings_from_before_glicko2_are_replayed_into_it(empty_engine: Engine) -> None:
    upgrade(empty_engine, "0017")
    with empty_engine.begin() as conn:
        for uid, userid in ((11, "ann"), (12, "ben")):
            conn.execute(
                text(
                    "INSERT INTO users (id, userid, display_id, full_name, email, password_hash,"
                    " disabled, created_at, mail_format, digest) VALUES (:id, :userid, :userid,"
                    " '', :email, 'x', false, CURRENT_TIMESTAMP, 'html', 'off')"
                ),
                {"id": uid, "userid": userid, "email": f"{userid}@example.org"},
            )
            conn.execute(
                text(
                    "INSERT INTO ratings (game, user_id, rating, games, wins, losses, draws,"
                    " updated_at) VALUES ('owlman', :id, 1600, 2, 1, 1, 0, CURRENT_TIMESTAMP)"
                ),
                {"id": uid},
            )
        # Ann won the first board, ben the second, a week later.
        for board, day, winner in ((1, "2026-01-01", 11), (2, "2026-01-08", 12)):
            conn.execute(
                text(
                    "INSERT INTO games (id, game, options, seed, status, ply, to_move, state,"
                    " state_version, version, created_at, updated_at) VALUES (:id, 'owlman',"
                    " '{}', 7, 'finished', 9, '', '{}', 1, 1, :day, :day)"
                ),
                {"id": board, "day": day},
            )
            for uid in (11, 12):
                conn.execute(
                    text(
                        "INSERT INTO rating_changes (game_id, user_id, score, change)"
                        " VALUES (:board, :id, :score, 0)"
                    ),
                    {"board": board, "id": uid, "score": 1.0 if uid == winner else 0.0},
                )
    upgrade(empty_engine)
    assert fill_glicko(empty_engine, 7.0) == 2
    assert fill_glicko(empty_engine, 7.0) == 0  # done once
    with empty_engine.connect() as conn:
        rows = conn.execute(
            text("SELECT user_id, glicko, glicko_rd, glicko_at FROM ratings ORDER BY user_id")
        ).all()
        changes = conn.execute(
            text("SELECT glicko_change FROM rating_changes WHERE game_id = 2 ORDER BY user_id")
        ).all()
    (ann, ann_glicko, ann_rd, ann_at), (ben, ben_glicko, ben_rd, ben_at) = rows
    # Won and lost one each, the later win counting as much: ben (who won last) stands higher.
    assert ben_glicko > 1500 > ann_glicko and ann_rd == ben_rd < 350
    assert ann_at is not None and str(ann_at).startswith("2026-01-08")
    assert changes[0][0] < 0 < changes[1][0]


def test_boards_from_before_clocks_keep_none_and_the_signed_off_get_a_fresh_bank(
    empty_engine: Engine,
) -> None:
    upgrade(empty_engine, "0018")
    with empty_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, userid, display_id, full_name, email, password_hash,"
                " disabled, created_at, mail_format, digest, away_since) VALUES (100, 'ann',"
                " 'ann', '', 'ann@example.org', 'x', false, CURRENT_TIMESTAMP, 'html', 'off',"
                " '2020-01-01 00:00:00')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO games (id, game, options, seed, status, ply, to_move, state,"
                " state_version, version, created_at, updated_at) VALUES (1, 'owlman', '{}',"
                " 7, 'active', 0, '0', '{}', 1, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        away = conn.execute(
            text("SELECT away_since, vacation_days_used FROM users WHERE id = 100")
        ).one()
        clock = conn.execute(text("SELECT time_control, clock_due_at FROM games")).one()
    assert not str(away[0]).startswith("2020") and away[1] == 0
    assert tuple(clock) == (None, None)


def test_a_user_bouncing_at_the_upgrade_is_on_a_vacation_the_bounce_began(
    empty_engine: Engine,
) -> None:
    """Issue 48: the mark alone no longer stops a clock; a user whose address is marked at the
    upgrade is on a vacation taken from their bank instead (core.accounts.unreachable)."""
    upgrade(empty_engine, "0022")
    with empty_engine.begin() as conn:
        for number, name in ((100, "ann"), (101, "ben")):
            conn.execute(
                text(
                    "INSERT INTO users (id, userid, display_id, full_name, email, password_hash,"
                    " disabled, created_at) VALUES (:id, :name, :name, '', :email, 'x', false,"
                    " CURRENT_TIMESTAMP)"
                ),
                {"id": number, "name": name, "email": f"{name.title()}@example.org"},
            )
        conn.execute(
            text(
                "INSERT INTO addresses (address, created_at, hard_bounces, bouncing_since)"
                " VALUES ('ann@example.org', CURRENT_TIMESTAMP, 3, CURRENT_TIMESTAMP)"
            )
        )
    upgrade(empty_engine)
    with empty_engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT userid, away_since IS NOT NULL, vacation_automatic, vacation_unreachable"
                " FROM users WHERE id IN (100, 101) ORDER BY id"
            )
        ).all()
    assert [(r[0], bool(r[1]), bool(r[2]), bool(r[3])) for r in rows] == [
        ("ann", True, True, True),
        ("ben", False, False, False),
    ]
