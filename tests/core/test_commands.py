"""The command core on a real database, without mail: every command and every user mistake.

The ``client`` and ``players`` fixtures are in tests/core/conftest.py."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from pbmserv.db.models import GameRow, MoveRow, Observer, User
from pbmserv.outbound.wording import notice_headline
from tests.core.client import Client

pytestmark = pytest.mark.db


def count(client: Client, model) -> int:  # type: ignore[no-untyped-def]
    return client.query(select(func.count()).select_from(model))[0][0]


def people(client: Client) -> int:
    """Users who are not robots (the robots are there from the start: migration 0017)."""
    return client.query(select(func.count()).where(User.robot_level.is_(None)))[0][0]


def test_signup_stores_hashed_password_and_rejects_duplicates(client: Client) -> None:
    section = client.run("signup alice secret1 Alice Liddell")
    assert section.ok and "alice" in section.text
    assert section.command == "signup alice ******** Alice Liddell"
    with client.session() as session:
        user = session.scalar(select(User).where(User.robot_level.is_(None)))
        assert user.email == "alice@example.org" and user.full_name == "Alice Liddell"
        assert "secret1" not in user.password_hash and user.password_hash.startswith("$argon2")
    again = client.run("signup ALICE other123")
    assert not again.ok and "taken" in again.text and people(client) == 1


@pytest.mark.parametrize(
    "line, problem",
    [
        ("signup a secret1", "cannot be a user id"),
        ("signup 9lives secret1", "cannot be a user id"),
        ("signup chameleon secret1", "command or game name"),
        ("signup Robot4 secret1", "kept for the robots"),
        ("signup dave abc", "4 to 128 characters"),
        ("signup dave", "some words are missing"),
    ],
)
def test_signup_mistakes(client: Client, line: str, problem: str) -> None:
    section = client.run(line)
    assert not section.ok and problem in section.text
    assert "signup USERID PASSWORD [FULL NAME]" in section.text
    assert people(client) == 0


def test_password_change_needs_the_old_password(players: Client) -> None:
    wrong = players.run("password alice nope1234 newpass1")
    assert not wrong.ok and "the user id or password is wrong" in wrong.text
    assert wrong.command == "password alice ******** ********"
    assert players.run("password alice secret1 newpass1").ok
    assert players.run("status alice").ok
    assert not players.run("password alice secret1 other123").ok
    assert players.run("password ALICE newpass1 other123").ok


def test_email_change_tells_both_addresses(players: Client) -> None:
    section = players.run("email alice secret1 alice@new.example", sender="alice@example.org")
    assert section.ok
    told = sorted(n.to for n in players.notifications)
    assert told == ["alice@new.example"]  # the old address is the sender: it gets the reply
    section = players.run("email alice secret1 a2@new.example", sender="someone@else.example")
    assert sorted(n.to for n in players.notifications) == ["a2@new.example", "alice@new.example"]
    bad = players.run("email alice secret1 not-an-address")
    assert not bad.ok and "not a mail address" in bad.text


def test_unknown_commands_and_games_get_help(client: Client) -> None:
    section = client.run("frobnicate now")
    assert not section.ok and "the first word (a command or a game) is not one we know" in (
        section.text
    )
    assert "frobnicate" not in section.text and "help" in section.text
    section = client.run("chameleon dance 1")
    assert not section.ok and "the word after chameleon (a command) is not one" in section.text
    # A slip of a known word is quoted, with what it was probably meant to be.
    section = client.run("chamelon move 1 alice secret1 d4")
    assert '"chamelon" is not one we know; perhaps you meant "chameleon" (games:' in section.text
    section = client.run("chameleon mvoe 1 alice secret1 d4")
    assert '"mvoe" is not one we know; perhaps you meant "move".' in section.text
    assert "secret1" not in section.text
    section = client.run("chameleon")
    assert not section.ok


def test_help_index_commands_game_and_command(client: Client) -> None:
    index = client.run("help")
    assert index.ok and "chameleon" in index.text and "help commands" in index.text
    commands = client.run("HELP commands")
    assert "GAME move BOARD USERID PASSWORD MOVE" in commands.text
    assert "signup USERID PASSWORD [FULL NAME]" in commands.text
    game = client.run("help chameleon")
    assert game.ok and "swap" in game.text.lower() and "f4x" in game.text
    move = client.run("help move")
    assert move.ok and "GAME move BOARD USERID PASSWORD MOVE" in move.text
    missing = client.run("help ../../etc/passwd")
    assert not missing.ok and "no help" in missing.text


def test_challenge_creates_board_and_mails_both_players(players: Client) -> None:
    section = players.run("chameleon challenge -size=5 alice bob")
    assert section.ok and "Board 1" in section.text
    assert sorted(n.to for n in players.notifications) == ["alice@example.org", "bob@example.org"]
    subjects = {n.to: notice_headline(n) for n in players.notifications}
    assert subjects["alice@example.org"] == "chameleon board 1: your move"
    assert subjects["bob@example.org"] == "chameleon board 1: waiting for alice"
    with players.session() as session:
        row = session.get(GameRow, 1)
        assert row.options == {"size": 5} and row.to_move == "0" and row.status == "active"


@pytest.mark.parametrize(
    "line, problem",
    [
        ("chameleon challenge -size=30 alice bob", "between 3 and 26"),
        ("chameleon challenge -colour=red alice bob", "not an option"),
        ("chameleon challenge -size alice bob", "write options as -name=value"),
        ("chameleon challenge alice nobody", 'no user "nobody"'),
        ("chameleon challenge alice alice", "against themselves"),
        ("chameleon challenge alice bob carol", "needs 2 user ids"),
    ],
)
def test_challenge_mistakes(players: Client, line: str, problem: str) -> None:
    section = players.run(line)
    assert not section.ok and problem in section.text, section.text
    assert count(players, GameRow) == 0 and players.notifications == []


def test_moves_turns_passwords_and_errors(players: Client) -> None:
    players.run("chameleon challenge -size=5 alice bob")
    out_of_turn = players.run("chameleon move 1 bob hunter22 c3x")
    assert not out_of_turn.ok and "not your turn" in out_of_turn.text
    wrong = players.run("chameleon move 1 alice WRONG c3x")
    assert not wrong.ok and "the user id or password is wrong" in wrong.text
    assert "WRONG" not in wrong.text and wrong.command.endswith("******** c3x")
    # The command was written right: no syntax lesson (issue 47).
    assert "chameleon move BOARD USERID PASSWORD MOVE" not in wrong.text
    stranger = players.run("chameleon move 1 carol pass3333 c3x")
    assert not stranger.ok and "not playing on board 1" in stranger.text
    bad_board = players.run("chameleon move 99 alice secret1 c3x")
    assert not bad_board.ok and "no board 99" in bad_board.text
    not_number = players.run("chameleon move xx alice secret1 c3x")
    assert not not_number.ok and "not a board number" in not_number.text
    garbage = players.run("chameleon move 1 alice secret1 zz")
    assert not garbage.ok and '"zz"' in garbage.text
    assert count(players, MoveRow) == 0
    ok = players.run("chameleon move 1 alice secret1 c3x")
    assert ok.ok and "c3x" in ok.text
    subjects = sorted(notice_headline(n) for n in players.notifications)
    assert subjects == ["chameleon board 1: waiting for Bob", "chameleon board 1: your move"]
    assert "The right syntax is" in garbage.text  # not a move at all: the syntax helps
    occupied = players.run("chameleon move 1 bob hunter22 c3o")
    assert not occupied.ok
    assert "The right syntax is" not in occupied.text  # well written, against the rules
    assert count(players, MoveRow) == 1 and players.notifications == []


def test_swap_command_and_move_form(players: Client) -> None:
    players.run("chameleon challenge -size=5 alice bob")
    assert not players.run("chameleon swap 1 alice secret1").ok  # not alice's turn
    players.run("chameleon move 1 alice secret1 c3x")
    section = players.run("chameleon swap 1 bob hunter22")
    assert section.ok, section.text
    assert players.run("chameleon move 1 alice secret1 a1o").ok  # alice, now Horz, moves next
    assert not players.run("chameleon move 1 bob hunter22 swap").ok


def test_a_whole_game_to_the_win_then_nothing_more(players: Client) -> None:
    players.run("chameleon challenge -size=3 alice bob")
    for line in (
        "chameleon move 1 alice secret1 b1x",
        "chameleon move 1 bob hunter22 a1o",
        "chameleon move 1 alice secret1 b2x",
    ):
        assert players.run(line).ok
    final = players.run("chameleon move 1 bob hunter22 b3x")
    # Bob (Horz) completed only Vert's chain b1-b2-b3: the opponent, alice, wins.
    assert final.ok and "alice" in final.text and "won" in final.text
    subjects = {n.to: notice_headline(n) for n in players.notifications}
    assert subjects == {
        "alice@example.org": "chameleon board 1: you won",
        "bob@example.org": "chameleon board 1: you lost",
    }
    late = players.run("chameleon move 1 alice secret1 c3x")
    assert not late.ok and "over" in late.text
    with players.session() as session:
        row = session.get(GameRow, 1)
        assert row.status == "finished" and row.result["winners"] == [0]
    history = players.run("chameleon history 1")
    assert "b1x" in history.text and "b3x" in history.text and "Result" in history.text
    status = players.run("status alice")
    assert "no active boards" in status.text


def test_resign_observe_unobserve_board_status(players: Client) -> None:
    players.run("chameleon challenge alice bob")
    watch = players.run("chameleon observe 1 carol pass3333", sender="carol@example.org")
    assert watch.ok and "now observe" in watch.text
    assert players.run("chameleon observe 1 carol pass3333").ok  # again: told, no duplicate
    assert count(players, Observer) == 1
    assert not players.run("chameleon observe 1 alice secret1").ok  # a player
    players.run("chameleon move 1 alice secret1 f6x")
    assert sorted(n.to for n in players.notifications) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    carol_mail = next(n for n in players.notifications if n.to == "carol@example.org")
    assert notice_headline(carol_mail) == "chameleon board 1: Bob to move"
    board = players.run("chameleon board 1")
    assert board.ok and "f6" in board.text and "a b c" in board.text
    status = players.run("status bob")  # asked by alice: bob's move, not hers (issue 47)
    assert "board 1" in status.text and "Bob's move" in status.text
    assert players.run("chameleon unobserve 1 carol pass3333").ok
    assert not players.run("chameleon unobserve 1 carol pass3333").ok
    resign = players.run("chameleon resign 1 bob hunter22")
    assert resign.ok and "alice" in resign.text
    with players.session() as session:
        row = session.get(GameRow, 1)
        assert row.status == "finished" and row.result["winners"] == [0]
    assert not players.run("chameleon resign 1 alice secret1").ok


def test_games_lists_chameleon(players: Client) -> None:
    section = players.run("games")
    assert section.ok and "chameleon" in section.text and "-size=3..26" in section.text


def test_replaying_stored_moves_reproduces_the_stored_state(players: Client) -> None:
    import random

    from pbmserv.games import find_game
    from pbmserv.games.base import move_rng

    game = find_game("chameleon")
    players.run("chameleon challenge -size=6 alice bob")
    rng = random.Random(7)
    accounts = [("alice", "secret1"), ("bob", "hunter22")]
    for _ in range(12):
        with players.session() as session:
            row = session.get(GameRow, 1)
            state = game.load(row.state)
        turn = game.to_move(state)
        if not turn.seats:
            break
        seat = next(iter(turn.seats))
        move = rng.choice(game.legal_moves(state, seat))
        userid, password = accounts[seat]
        text = game.format_move(state, move)
        assert players.run(f"chameleon move 1 {userid} {password} {text}").ok
    with players.session() as session:
        row = session.get(GameRow, 1)
        moves = session.scalars(
            select(MoveRow)
            .where(MoveRow.game_id == 1, MoveRow.kind == "move")
            .order_by(MoveRow.ply)
        ).all()
        replayed = game.new_game(row.options, random.Random(row.seed))
        for entry in moves:
            seat = next(iter(game.to_move(replayed).seats))
            move = game.parse_move(replayed, seat, entry.text)
            replayed = game.apply(replayed, move, move_rng(row.seed, entry.ply))
        assert game.dump(replayed) == row.state and len(moves) == row.ply > 0


def test_control_characters_never_reach_the_database(client: Client) -> None:
    section = client.run("signup dave secret1 Da\x00ve \x07Smith\u200b")
    assert section.ok
    with client.session() as session:
        user = session.scalar(select(User).where(User.userid == "dave"))
        assert user.full_name == "Da ve Smith"


def test_a_challenged_player_may_decline_before_moving(players: Client) -> None:
    players.run("chameleon challenge -size=5 alice bob")
    assert players.run("chameleon move 1 alice secret1 c3x").ok
    # Alice has moved: she may resign, not decline.
    late = players.run("chameleon decline 1 alice secret1")
    assert not late.ok and "already moved" in late.text
    before = len(players.notifications)
    declined = players.run("chameleon decline 1 bob hunter22")
    assert declined.ok and "declined" in declined.text, declined.text
    with players.session() as session:
        board = session.scalar(select(GameRow))
        assert board.status == "finished" and board.result["winners"] == []
        assert board.result["declined"] is True
        assert session.scalar(select(MoveRow.kind).order_by(MoveRow.id.desc())) == "decline"
    mailed = players.notifications[before:]
    assert sorted(n.to for n in mailed) == ["alice@example.org", "bob@example.org"]
    assert all("declined" in notice_headline(n) for n in mailed), [
        notice_headline(n) for n in mailed
    ]
    again = players.run("chameleon decline 1 bob hunter22")
    assert not again.ok and "already over" in again.text


def test_logs_leave_out_a_hidden_move_but_only_a_move(players: Client) -> None:
    assert players.run("hmdg challenge alice bob").ok
    # The opening point is a move: the log keeps the words before it.
    opening = players.run("hmdg move 1 alice secret1 E5")
    assert opening.ok and opening.log_fields()["command"] == "hmdg move 1 alice ******** [hidden]"
    reveal = players.run("hmdg reveal 1 alice secret1 C3")
    assert reveal.log_fields()["command"] == "hmdg reveal 1 alice ******** [hidden]"
    # A command that carries no move is logged as quoted, however many words it has.
    board = players.run("hmdg board 1 alice secret1 extra")
    assert board.log_fields()["command"] == "hmdg board 1 alice ******** ********"


def test_a_board_keeps_the_kind_of_its_end(players: Client) -> None:
    from pbmserv.core.play.boards import Board
    from pbmserv.core.play.game_service import board_outcome
    from pbmserv.games import find_game
    from pbmserv.games.base import Termination

    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon resign 1 bob hunter22").ok
    assert players.run("chameleon decline 2 bob hunter22").ok
    game = find_game("chameleon")
    with players.session() as session:
        kinds = {}
        for number in (1, 2):
            row = session.get(GameRow, number)
            board = Board(row=row, game=game, state=game.load(row.state))
            kinds[number] = board_outcome(board).termination
        assert kinds == {1: Termination.RESIGNATION, 2: Termination.DECLINED}
        # A result stored before kinds were kept reads back as of an unknown kind.
        row = session.get(GameRow, 1)
        row.result = {k: v for k, v in row.result.items() if k != "termination"}
        board = Board(row=row, game=game, state=game.load(row.state))
        assert board_outcome(board).termination is Termination.UNKNOWN


def test_a_kind_of_move_may_be_written_with_or_without_its_word_again(players: Client) -> None:
    assert players.run("entropy challenge -variant=entropy2 alice bob").ok
    # Order stocks first in Entropy II; the prompt's example is the move "stock RGBYP".
    stocked = players.run("entropy stock 1 alice secret1 stock RGBYP")
    assert stocked.ok, stocked.text
    assert "stock RGBYP" in stocked.text and "stock stock" not in stocked.text


def test_what_chance_drew_is_kept_with_each_move_and_replays(players: Client) -> None:
    import random

    from pbmserv.games import find_game
    from pbmserv.games.base import move_rng

    game = find_game("entropy")
    assert players.run("entropy challenge -size=5 alice bob").ok
    rng = random.Random(3)
    accounts = [("alice", "secret1"), ("bob", "hunter22")]
    for _ in range(8):
        with players.session() as session:
            state = game.load(session.get(GameRow, 1).state)
        seat = next(iter(game.to_move(state).seats))
        text = game.format_move(state, rng.choice(game.legal_moves(state, seat)))
        userid, password = accounts[seat]
        assert players.run(f"entropy move 1 {userid} {password} {text}").ok
    with players.session() as session:
        row = session.get(GameRow, 1)
        moves = session.scalars(
            select(MoveRow).where(MoveRow.game_id == 1).order_by(MoveRow.ply)
        ).all()
        replayed = game.new_game(row.options, random.Random(row.seed))
        draws = 0
        for entry in moves:
            seat = next(iter(game.to_move(replayed).seats))
            move = game.parse_move(replayed, seat, entry.text)
            replayed = game.apply(replayed, move, move_rng(row.seed, entry.ply))
            assert entry.chance == game.chance_outcome(replayed)
            draws += entry.chance is not None
    assert draws >= 3  # Chaos draws after each of Order's moves
