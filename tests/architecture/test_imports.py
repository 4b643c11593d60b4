"""The import graph of the package: no cycles, and every import points down the layer order of
docs/ARCHITECTURE.md (games <- robots <- core <- inbound, outbound <- runtime <- cli; pictures
draw the games alone; inbound and outbound never import each other; no mail wing imports a
game; the web view reads through the core and the pictures, and only cli and runtime start it).

The graph is grimp's, read from the source (imports inside functions and TYPE_CHECKING blocks
included: a cycle hidden in a function is still a cycle for the reader)."""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "pbmserv"

#: What each part of the package may import of ours, besides itself.
ALLOWED: dict[str, frozenset[str]] = {
    "__main__": frozenset({"cli"}),
    "cli": frozenset(
        {
            "core",
            "inbound",
            "outbound",
            "pictures",
            "runtime",
            "web",
            "db",
            "games",
            "tournaments",
            "config",
            "logs",
            "resources",
            "time_controls",
        }
    ),
    # Running the server: the children, the processing loop, the robots' child.
    "runtime": frozenset(
        {
            "inbound",
            "outbound",
            "pictures",
            "web",
            "core",
            "db",
            "config",
            "logs",
            "resources",
            "private_files",
        }
    ),
    # Mail in and mail out: each on its own, over the core (never each other).
    "inbound": frozenset({"core", "db", "config", "logs", "resources", "private_files"}),
    "outbound": frozenset(
        {"pictures", "core", "db", "config", "logs", "resources", "private_files"}
    ),
    # The read-only web view: over the core, the pictures and the games, never through the
    # mail wings (inbound, outbound) nor the server's running (runtime, cli), which start it.
    "web": frozenset(
        {"core", "pictures", "games", "db", "config", "logs", "resources", "time_controls"}
    ),
    # Board pictures, for mail and the web: they draw what the games give, nothing else.
    "pictures": frozenset({"games"}),
    "core": frozenset(
        {"db", "games", "robots", "tournaments", "config", "logs", "resources", "time_controls"}
    ),
    "db": frozenset({"config", "resources", "private_files"}),
    "games": frozenset(),
    # The robots' search: pure, over the game contract (and a game's own scoring for its
    # playout policy).
    "robots": frozenset({"games"}),
    "tournaments": frozenset(),
    # Correspondence clocks' pure rules: read by the config (a game's clock) and the core.
    "time_controls": frozenset(),
    "config": frozenset({"time_controls"}),
    "logs": frozenset(),
    "resources": frozenset(),
    # Creating the server's own files 0600/0700 (the database, the spool).
    "private_files": frozenset(),
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE)


def _edges(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    return sorted(
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
    )


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _game(module: str) -> str | None:
    """The game a module of pbmserv.games belongs to; None for the package's own modules."""
    parts = module.split(".")
    if len(parts) < 3 or parts[2] in ("base", "drawing", "testing"):
        return None
    return parts[2]  # a game is one module or one package


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    following: dict[str, list[str]] = {}
    for a, b in edges:
        following.setdefault(a, []).append(b)
        following.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in following[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in following[node]:
                found.append(sorted(component))

    for node in sorted(following):
        if node not in index:
            visit(node)
    return found


def layer_violations(edges: list[tuple[str, str]]) -> list[str]:
    wrong = []
    for importer, imported in edges:
        src, dst = _part(importer), _part(imported)
        if src == dst:
            if src == "games":
                game, target = _game(importer), _game(imported)
                if target is not None and target != game and imported != f"{PACKAGE}.games":
                    wrong.append(f"{importer} -> {imported}: a game imports another game")
            continue
        if dst == "":  # the package's own __init__
            continue
        if dst not in ALLOWED.get(src, frozenset()):
            wrong.append(f"{importer} -> {imported}: {src} may not import {dst}")
    return wrong


def test_the_package_has_no_import_cycle(graph: grimp.ImportGraph) -> None:
    assert cycles(_edges(graph)) == []


def test_every_import_points_down_the_layers(graph: grimp.ImportGraph) -> None:
    assert layer_violations(_edges(graph)) == []


#: The mail wings and the server's running: the web view imports none of them.
NOT_FOR_THE_WEB = frozenset({"inbound", "outbound", "runtime", "cli"})
#: Who may import the web view: the command line (`pbmserv web`) and `serve`'s children.
STARTS_THE_WEB = frozenset({"cli", "runtime"})


def test_the_web_view_reads_through_the_core_alone() -> None:
    assert not ALLOWED["web"] & NOT_FOR_THE_WEB
    importers = {part for part, allowed in ALLOWED.items() if "web" in allowed}
    assert importers <= STARTS_THE_WEB


def test_nothing_imports_the_web_view_but_cli_and_runtime(graph: grimp.ImportGraph) -> None:
    wrong = [
        f"{importer} -> {imported}"
        for importer, imported in _edges(graph)
        if _part(imported) == "web" and _part(importer) not in {"web", *STARTS_THE_WEB}
    ]
    assert wrong == []
    wrong_way = [
        f"{importer} -> {imported}"
        for importer, imported in _edges(graph)
        if _part(importer) == "web" and _part(imported) in NOT_FOR_THE_WEB
    ]
    assert wrong_way == []


def test_the_checks_see_what_they_must_refuse() -> None:
    # The checks themselves, on a made-up graph: a cycle, an upward import and a game
    # importing another game are all reported.
    edges = [
        ("pbmserv.core.a", "pbmserv.core.b"),
        ("pbmserv.core.b", "pbmserv.core.a"),
        ("pbmserv.core.a", "pbmserv.inbound.smtp"),
        ("pbmserv.inbound.smtp", "pbmserv.games.hmdg"),
        ("pbmserv.inbound.inbox", "pbmserv.outbound.compose"),
        ("pbmserv.pictures.raster", "pbmserv.core.a"),
        ("pbmserv.games.hmdg", "pbmserv.games.chameleon"),
        ("pbmserv.games.entropy", "pbmserv.games.entropy.score"),
        ("pbmserv.games.hmdg", "pbmserv.games.base"),
        ("pbmserv.web.app", "pbmserv.outbound.compose"),
        ("pbmserv.core.a", "pbmserv.web.app"),
        ("pbmserv.cli.main", "pbmserv.web.serving"),
        ("pbmserv.web.boards", "pbmserv.core.play.positions"),
    ]
    assert cycles(edges) == [["pbmserv.core.a", "pbmserv.core.b"]]
    assert layer_violations(edges) == [
        "pbmserv.core.a -> pbmserv.inbound.smtp: core may not import inbound",
        "pbmserv.inbound.smtp -> pbmserv.games.hmdg: inbound may not import games",
        "pbmserv.inbound.inbox -> pbmserv.outbound.compose: inbound may not import outbound",
        "pbmserv.pictures.raster -> pbmserv.core.a: pictures may not import core",
        "pbmserv.games.hmdg -> pbmserv.games.chameleon: a game imports another game",
        "pbmserv.web.app -> pbmserv.outbound.compose: web may not import outbound",
        "pbmserv.core.a -> pbmserv.web.app: core may not import web",
    ]
