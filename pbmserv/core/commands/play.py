"""The commands written after a game name: challenge, move, swap, board, history, resign,
observe, unobserve, queue (moves played for you when your opponent plays what you
foresaw, see :mod:`pbmserv.core.play.queued`), and newlink (a new private link to the web)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import func, select

from pbmserv.core.accounts import logins
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import consent, declining, numbering, queued
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_view, notify_board, renew_private_link
from pbmserv.core.play.boards import Board, load_board
from pbmserv.core.results import CommandError, Section
from pbmserv.core.robots import turns as robots
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import MoveRow, Observer, User
from pbmserv.games.base import AnyGame, OptionError
from pbmserv.time_controls import PRESETS, TimeControl, TimeControlError, parse_time_control

#: History entries only their own player may see.
PRIVATE_ENTRIES = ("submit", "queue")


def board_player(
    ctx: CommandContext, game: AnyGame, line: CommandLine, *, for_update: bool = True
) -> tuple[Board, User, int]:
    """Load the board named on a ``GAME VERB BOARD USERID PASSWORD ...`` line (for update
    unless only looked at), and authenticate one of its players: the board, user and seat."""
    board = load_board(ctx, game, line.words[2], for_update=for_update)
    players = [seat.user for seat in board.row.seats]
    user = logins.authenticate(ctx, line.words[3], line.words[4], among=players)
    seat = board.seat_of(user)
    if seat is None:
        raise CommandError(f"{user.display_id} is not playing on board {board.number}")
    return board, user, seat


def _split_options(words: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    names: list[str] = []
    for word in words:
        if word.startswith("-"):
            name, sep, value = word[1:].partition("=")
            if not sep or not name or not value:
                raise CommandError(f'"{word}" is not an option: write options as -name=value')
            options[name] = value
        else:
            names.append(word)
    return options, names


def _challenge_words(words: tuple[str, ...]) -> int:
    """GAME challenge, its -OPTION=VALUE words, and two user ids."""
    return 4 + sum(word.startswith("-") for word in words[2:])


@command(
    "challenge",
    "GAME challenge [-OPTION=VALUE ...] USERID1 USERID2",
    "start a new board; USERID1 moves first",
    game_scoped=True,
    min_words=4,
    max_words=_challenge_words,
    details="Options are the game's own (help GAME), and -clock=, a clock for each player: \n"
    "-clock=10d+36h/10d (10 days to start, 36 hours more a move, never more than 10 days),\n"
    f"a preset ({', '.join(PRESETS)}), or -clock=none (no clock: reminders and a forfeit\n"
    "after idle weeks instead). See: help clocks\n"
    "You may challenge two other players: the board counts for a player (clock, vacation,\n"
    "rating) only once they accept it, by a move or GAME accept BOARD USERID PASSWORD;\n"
    "until then they may decline it, and unaccepted it is cancelled after idle weeks.\n"
    "A robot plays only the person who challenges it.",
)
def challenge(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    raw_options, names = _split_options(line.words[2:])
    if len(names) != game.SPEC.players:
        raise CommandError(
            f"{game.SPEC.title} needs {game.SPEC.players} user ids, you named {len(names)}"
        )
    users = [ctx.require_user(name) for name in names]
    if len({u.id for u in users}) != len(users):
        raise CommandError("a player cannot play against themselves: name two different users")
    starters = consent.sender_users(ctx)  # who sent it: whose seats it accepts at once
    consent.check_robot_challenge(ctx, users, starters)
    robots.check_challenge(ctx, users)
    time_control = _time_control(ctx, game, raw_options.pop("clock", None))
    try:
        options = game.validate_options(raw_options, len(users))
    except OptionError as error:
        allowed = "; ".join(o.describe() for o in game.SPEC.options) or "none"
        raise CommandError(str(error), hint=f"Options of {game.SPEC.name}: {allowed}") from None
    accepted = consent.accepted_at_start(ctx, users, starters)
    board = service.create_board(ctx, game, options, users, time_control, accepted)
    if not board.robot_moves_first():  # else the robot's first move brings the board
        started = consent.started_text(ctx, starters)
        notify_board(ctx, board, event=f"{new_game_event(board)} {started}")
    context = {
        "game": game.SPEC.name,
        "title": game.SPEC.title,
        "board": board.number,
        "options": options,
        "time_control": time_control.describe() if time_control else None,
        "players": [board.seat_label(s) for s in range(len(users))],
        # The robot on the board, if one is: it is mailed nothing and needs no asking.
        "robot": next((u.display_id for u in users if is_robot(u)), None),
        "person": next((u.display_id for u in users if not is_robot(u)), None),
        "robot_first": board.robot_moves_first(),
        # Who must still accept the board before it counts for them (core.play.consent).
        "to_accept": [u.display_id for u in users if u.id not in accepted],
    }
    return Section(
        "challenged",
        context,
        summary=f"{game.SPEC.name} challenge board={board.number}",
    )


def _time_control(ctx: CommandContext, game: AnyGame, written: str | None) -> TimeControl | None:
    """The clock a challenge asks for (``-clock=``), else the game's from the config."""
    if written is None:
        return ctx.settings.time_control(game.SPEC.name)
    try:
        return parse_time_control(written)
    except TimeControlError as error:
        presets = ", ".join(f"{name} ({text})" for name, text in PRESETS.items())
        raise CommandError(
            str(error),
            hint=f"-clock=INITIAL+INCREMENT/MAXIMUM, like -clock=10d+36h/10d; or a preset: "
            f"{presets}; or -clock=none. See: help clocks",
        ) from None


def new_game_event(board: Board) -> str:
    return f"New game: {board.game.SPEC.title}, board {board.number}."


def play_and_report(
    ctx: CommandContext,
    game: AnyGame,
    board: Board,
    seat: int,
    text: str | None,
) -> Section:
    """Play ``text`` for ``seat`` (None: take the swap) and report it to everyone."""
    mover = board.seat_label(seat)  # the role the mover plays this move in (roles may change)
    # A robot's opening move is the board's first mail (the challenge mailed nothing).
    opening = new_game_event(board) + " " if board.robot_moves_first() else ""
    if text is None:
        played = service.play_swap(ctx, board, seat)
    else:
        played = service.play(ctx, board, seat, text)
    public, private = f"{mover} played {played.public_text}.", f"{mover} played {played.text}."
    answered = queued.answer(ctx, board, seat, played)
    reply_text = None
    if answered is not None:  # queues exist only where nothing is hidden: one text for all
        reply_seat, reply = answered
        reply_text = f"{board.seat_label(reply_seat)} played {reply.text} (queued in advance)."
        public, private = f"{public} {reply_text}", f"{private} {reply_text}"
    notify_board(
        ctx,
        board,
        opening + public,
        private_events={seat: opening + private},
        new_game=bool(opening),
    )
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "move": played.text,
        "answered": reply_text,
        "result": service.result_text(board) if board.finished else None,
        "status": service.status_for(board, seat),
    }
    return Section(
        "moved",
        context,
        # Logs get the public text: a hidden move's secret stays with its owner.
        summary=f"{game.SPEC.name} move board={board.number} {played.public_text}",
    )


#: ``MOVE#N``: the move counts only as move N of the board (a guard against stale mail).
_GUARDED = re.compile(r"(.*?)\s*#(\d+)")


@command(
    "move",
    "GAME move BOARD USERID PASSWORD MOVE[#N]",
    'make your move (see "help GAME" for the move syntax); with #N, only as move N',
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    move_from=5,
    details="A move written with #N after it (d4x#12) is played only if it is move N of the\n"
    'board (the board mail says "next is move N"; in chess both sides\' moves N share\n'
    "the number): mail that arrives late, or twice, then changes nothing.",
)
def move(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    text = line.rest(5)
    guarded = _GUARDED.fullmatch(text)
    if guarded is not None:
        text, number = guarded.group(1), int(guarded.group(2))
        problem = numbering.guard_problem(game.SPEC, board.row.ply, number)
        if problem is not None:
            raise CommandError(
                f"the move was written for move {number} of board {board.number}, but "
                f"{problem}; nothing was played",
                syntax_was_right=True,
            )
    return play_and_report(ctx, game, board, seat, text)


def play_verb(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    """A game's kind of move (``hmdg reveal ...``): the move is the kind's word and the rest.
    The word written again (``hmdg reveal 3 bob PW reveal C3``, as a prompt's example shows
    the move) is the same move."""
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    kind, rest = line.words[1].lower(), line.rest(5)
    first = rest.split(maxsplit=1)[0].lower() if rest.strip() else ""
    text = rest if first == kind else " ".join([kind, rest]).strip()
    return play_and_report(ctx, game, board, seat, text)


@command(
    "swap",
    "GAME swap BOARD USERID PASSWORD",
    "take the swap option (games that have one, on the second move)",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def swap(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    if not game.SPEC.has_swap:
        raise CommandError(f"{game.SPEC.title} has no swap option")
    board, _user, seat = board_player(ctx, game, line)
    return play_and_report(ctx, game, board, seat, None)


@command(
    "board",
    "GAME board BOARD [USERID PASSWORD]",
    "send the board again (with your password: your own view)",
    game_scoped=True,
    secret_words=(4,),
    min_words=3,
    max_words=5,
)
def board_command(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board = load_board(ctx, game, line.words[2], for_update=False)
    seat: int | None = None
    user: User | None = None
    if len(line.words) >= 5:
        user = logins.authenticate(ctx, line.words[3], line.words[4])
        seat = board.seat_of(user)
    elif len(line.words) == 4:
        raise CommandError("to see your own view, give your user id and password")
    context = {"view": board_view(board, seat, user, now=ctx.now())}
    return Section(
        "board",
        context,
        summary=f"{game.SPEC.name} board {board.number}",
    )


@command(
    "history",
    "GAME history BOARD [FORMAT]",
    "the moves played so far on a board (FORMAT: a record such as pgn, where the game has one)",
    game_scoped=True,
    min_words=3,
    max_words=4,
)
def history(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board = load_board(ctx, game, line.words[2], for_update=False)
    # Submitted and queued moves are their player's business alone.
    rows = [row for row in service.history(ctx, board) if row.kind not in PRIVATE_ENTRIES]
    if len(line.words) > 3:
        return _exported_history(game, board, rows, line.words[3].lower())
    entries = [
        {
            "number": numbering.label(game.SPEC, row.ply),
            "kind": row.kind,
            # The user alone: a role (Vert, Order...) may have changed since the move.
            "player": board.user_at(row.seat).display_id if row.seat is not None else "",
            # A hidden move shows its public text until the game is over.
            "text": row.text if board.finished else (row.public_text or row.text),
        }
        for row in rows
    ]
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "players": [board.seat_label(s.seat) for s in board.row.seats],
        "entries": entries,
        "result": service.result_text(board) if board.finished else None,
        "formats": game.SPEC.record_formats,
    }
    return Section(
        "history",
        context,
        summary=f"{game.SPEC.name} history {board.number}",
    )


def _exported_history(game: AnyGame, board: Board, rows: list[MoveRow], fmt: str) -> Section:
    if fmt not in game.SPEC.record_formats:
        offered = ", ".join(game.SPEC.record_formats) or "none"
        raise CommandError(
            f'"{fmt}" is not a record format of {game.SPEC.name} (formats: {offered})'
        )
    if game.SPEC.hidden_information and not board.finished:
        raise CommandError(f"board {board.number} hides moves until it is over")
    record = game.export(
        fmt,
        service.starting_state(board),
        [row.text for row in rows if row.kind == "move"],
        service.board_outcome(board),
        service.record_headers(board),
    )
    context = {"game": game.SPEC.name, "board": board.number, "format": fmt, "record": record}
    return Section(
        "record",
        context,
        summary=f"{game.SPEC.name} history {board.number} {fmt}",
    )


@command(
    "resign",
    "GAME resign BOARD USERID PASSWORD",
    "resign the game on a board",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def resign(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    return _end_by_player(ctx, line, game, service.resign, "resign", "resigned", "resigned")


@command(
    "decline",
    "GAME decline BOARD USERID PASSWORD",
    "refuse a challenge you did not ask for, before your first move (no win or loss)",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def decline(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    told = "declined the challenge"
    return _end_by_player(ctx, line, game, declining.decline, "decline", "declined", told)


def _end_by_player(
    ctx: CommandContext,
    line: CommandLine,
    game: AnyGame | None,
    end: Callable[[CommandContext, Board, int], None],
    verb: str,
    done: str,
    told: str,
) -> Section:
    """A player ends the board (resigns, declines): tell everyone on it (that the player
    ``told``), answer the player with the ``done`` section."""
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    end(ctx, board, seat)
    notify_board(ctx, board, f"{board.seat_label(seat)} {told}.")
    context = {"game": game.SPEC.name, "board": board.number, "result": service.result_text(board)}
    return Section(
        done,
        context,
        summary=f"{game.SPEC.name} {verb} board={board.number}",
    )


@command(
    "newlink",
    "GAME newlink BOARD USERID PASSWORD",
    "a new private link to your own view of a board on the web; the old one stops working",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
    details="Where this server has a web view, your board mail links to your own view of the\n"
    "board, a private link for you alone. If it went to anyone else, this stops it at once\n"
    "and mails you the board again, with a new link, at your own address. See: help web",
)
def newlink(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    if ctx.settings.web_base is None:
        raise CommandError(
            "this server has no web view: its board mail carries no links, so there is no "
            "private link to replace",
            syntax_was_right=True,
        )
    if len(line.words) > 5:
        raise CommandError("too many words: a board number, your user id and password only")
    board, user, seat = board_player(ctx, game, line)
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: everything on it is public now, and your private "
            "link leads to its public page",
            syntax_was_right=True,
        )
    had_link = renew_private_link(ctx, board, user, seat)
    context = {"game": game.SPEC.name, "board": board.number, "had_link": had_link}
    # Logged without the link: it is its player's secret.
    return Section(
        "link_renewed", context, summary=f"{game.SPEC.name} newlink board={board.number}"
    )


def _observer_args(ctx: CommandContext, game: AnyGame, line: CommandLine) -> tuple[Board, User]:
    board = load_board(ctx, game, line.words[2], for_update=False)
    user = logins.authenticate(ctx, line.words[3], line.words[4])
    if board.seat_of(user) is not None:
        raise CommandError(
            f"{user.display_id} plays on board {board.number} and gets its mail already"
        )
    return board, user


@command(
    "observe",
    "GAME observe BOARD USERID PASSWORD",
    "receive the board after every move",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def observe(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, user = _observer_args(ctx, game, line)
    existing = ctx.session.get(Observer, (board.number, user.id))
    if existing is None:
        most = ctx.settings.max_observers_per_board
        watching = ctx.session.scalar(
            select(func.count()).select_from(Observer).where(Observer.game_id == board.number)
        )
        if (watching or 0) >= most:
            raise CommandError(
                f"board {board.number} has {most} observers, the most a board may have",
                hint="Its history stays open to all: send "
                f'"{game.SPEC.name} history {board.number}".',
                syntax_was_right=True,
            )
        ctx.session.add(Observer(game_id=board.number, user_id=user.id))
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "already": existing is not None,
        "view": board_view(board, None, user, now=ctx.now()),
    }
    return Section(
        "observing",
        context,
        summary=f"{game.SPEC.name} observe board={board.number}",
    )


@command(
    "unobserve",
    "GAME unobserve BOARD USERID PASSWORD",
    "stop receiving a board you observe",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def unobserve(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, user = _observer_args(ctx, game, line)
    existing = ctx.session.scalar(
        select(Observer).where(Observer.game_id == board.number, Observer.user_id == user.id)
    )
    if existing is None:
        raise CommandError(f"{user.display_id} is not observing board {board.number}")
    ctx.session.delete(existing)
    context = {"game": game.SPEC.name, "board": board.number}
    return Section(
        "unobserved",
        context,
        summary=f"{game.SPEC.name} unobserve board={board.number}",
    )


@command(
    "queue",
    "GAME queue BOARD USERID PASSWORD THEIRMOVE MYMOVE [THEIRMOVE MYMOVE ...] | clear",
    "moves played for you at once when your opponent plays the move you foresaw",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    move_from=5,
    details="Pairs of moves, checked now: if your opponent plays the first, the second is\n"
    "played for you at once, and the next pair waits for their next move. Any other move\n"
    'drops the queue. Your opponent never sees it. "clear" drops it; "GAME showas" lists it.\n'
    "Games with hidden moves or chance take no queue. A move written with a space in it\n"
    "(Rebel Buffalo's e6-e5 dog:a2) is queued with commas between the moves:\n"
    "    buffalo queue 17 alice PASSWORD f3-f4, e6-e5 dog:a2",
)
def queue(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    words = line.words[5:]
    data = {"game": game.SPEC.name, "board": board.number}
    if len(words) == 1 and words[0].lower() == "clear":
        queued.clear(ctx, board, seat)
        return Section("queued", {**data, "pairs": []}, summary=f"{game.SPEC.name} queue clear")
    texts = queued.queue(ctx, board, seat, _moves(line.rest(5)))
    pairs = [{"theirs": texts[i], "mine": texts[i + 1]} for i in range(0, len(texts), 2)]
    # Logged as a count: the queue is its owner's secret.
    return Section(
        "queued",
        {**data, "pairs": pairs},
        summary=f"{game.SPEC.name} queue board={board.number} pairs={len(pairs)}",
    )


def _moves(text: str) -> list[str]:
    """The queued moves: separated by commas where there are any (so that a move may hold a
    space), else one a word."""
    if "," not in text:
        return text.split()
    return [move.strip() for move in text.split(",")]
