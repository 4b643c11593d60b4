"""The deployment kit agrees with the program.

The example config loads with the values it states; every command line in the systemd unit,
the Postfix pipe, the container files and the operations guide is one the CLI accepts, with
the meaning the kit gives it; every environment variable they set is one pbmserv reads; and
the files agree with each other (paths, address, ports). Renaming a flag, a subcommand, a
setting or a variable breaks these tests, not a production server.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import fields
from pathlib import Path

import pytest

from pbmserv.cli.main import build_parser
from pbmserv.cli.options import setting_overrides
from pbmserv.config import CONFIG_ENV, ENV_NAMES, IdleLimits, Settings, load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BINARY = "/opt/pbmserv/.venv/bin/pbmserv"
CONFIG = Path("/etc/pbmserv/pbmserv.toml")
SUBCOMMANDS = ("serve", "mail", "deliver", "db", "config", "admin")


def read(name: str) -> str:
    return (DEPLOY / name).read_text(encoding="utf-8")


def strict(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` and all its subcommands without abbreviations: a flag renamed to a longer
    name (--no-process to --no-processing) must not keep accepting the old one as a prefix."""
    parser.allow_abbrev = False
    for sub in subcommands(parser, required=False).values():
        strict(sub)
    return parser


def accepts(argv: list[str]) -> argparse.Namespace:
    """The parsed arguments; fail (instead of exiting) if the CLI rejects ``argv``."""
    try:
        return strict(build_parser()).parse_args(argv)
    except SystemExit as exit_:
        pytest.fail(f"pbmserv rejects {shlex.join(argv)!r} (exit {exit_.code})")


def example_settings() -> Settings:
    return load_settings(environ={}, config_file=DEPLOY / "pbmserv.toml")


def subcommands(
    parser: argparse.ArgumentParser, required: bool = True
) -> dict[str, argparse.ArgumentParser]:
    """The sub-parsers of ``parser`` by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    assert not required, f"{parser.prog} has no subcommands"
    return {}


# --- the example config ----------------------------------------------------------------------


def test_the_example_config_loads_with_the_production_values_it_states() -> None:
    settings = example_settings()
    assert settings.db_url.startswith("postgresql+psycopg://")
    assert settings.listen == "127.0.0.1:2525"
    assert settings.relay_host_port == ("127.0.0.1", 25)
    assert settings.spool == Path("/var/spool/pbmserv")
    assert settings.address == "pbmserv@games.example.org"
    assert settings.log_format == "json"
    assert (settings.max_message_bytes, settings.rate_limit_per_hour) == (1_048_576, 300)
    assert settings.maintenance_interval_seconds == 3600
    assert settings.sent_retention_days == 30
    assert settings.idle_limits("extinction") == IdleLimits(5.0, 21.0)
    assert settings.idle_limits("chameleon") == IdleLimits(7.0, 28.0)


def test_the_example_config_names_every_setting() -> None:
    text = read("pbmserv.toml")
    named = set(re.findall(r"^#? ?([a-z0-9_]+) = ", text, re.M))
    assert {f.name for f in fields(Settings)} - {"game_limits", "game_clocks"} <= named
    # ... and its commented-out keys are valid too, once uncommented.
    assert {"relay_username", "relay_password"} <= set(re.findall(r"^# ([a-z_]+) = ", text, re.M))


def test_the_commented_out_settings_load_when_uncommented(tmp_path: Path) -> None:
    text = re.sub(r"^# ([a-z0-9_]+ = )", r"\1", read("pbmserv.toml"), flags=re.M)
    # The env file it names, as the install procedure makes it (empty), here in tmp_path.
    env_file = tmp_path / "pbmserv.env"
    env_file.write_text("# secrets\nPBMSERV_RELAY_PASSWORD=from-the-env-file\n")
    text = text.replace('"/etc/pbmserv/pbmserv.env"', f'"{env_file}"')
    (tmp_path / "pbmserv.toml").write_text(text, encoding="utf-8")
    settings = load_settings(environ={}, config_file=tmp_path / "pbmserv.toml")
    assert settings.relay_username == "pbmserv"
    assert settings.relay_password == "from-the-env-file"  # the env file wins over the TOML


def test_the_example_config_gives_way_to_the_environment() -> None:
    settings = load_settings(
        environ={"PBMSERV_LOG_FORMAT": "text", "PBMSERV_DB": "sqlite:///x.db"},
        config_file=DEPLOY / "pbmserv.toml",
    )
    assert (settings.log_format, settings.db_url) == ("text", "sqlite:///x.db")


# --- systemd ---------------------------------------------------------------------------------


def unit_commands() -> dict[str, tuple[str, list[str]]]:
    unit = read("systemd/pbmserv.service")
    lines = re.findall(r"^(Exec\w+)=(\S+) (.*)$", unit, re.M)
    assert lines, "no Exec lines in the unit"
    return {key: (binary, shlex.split(rest)) for key, binary, rest in lines}


def test_the_systemd_unit_migrates_then_serves_with_real_commands() -> None:
    commands = unit_commands()
    assert set(commands) == {"ExecStartPre", "ExecStart"}
    for binary, _argv in commands.values():
        assert binary == BINARY
    pre = accepts(commands["ExecStartPre"][1])
    assert (pre.command, pre.db_command, pre.config_file) == ("db", "upgrade", CONFIG)
    start = accepts(commands["ExecStart"][1])
    assert (start.command, start.config_file) == ("serve", CONFIG)


def test_the_systemd_unit_is_hardened_and_may_write_the_spool() -> None:
    unit = read("systemd/pbmserv.service")
    settings = dict(re.findall(r"^(\w+)=(.*)$", unit, re.M))
    assert settings["User"] == "pbmserv"
    assert settings["Restart"] == "on-failure"
    # EX_CONFIG and EX_UNAVAILABLE (the port is taken): a person must act.
    assert settings["RestartPreventExitStatus"] == "69 78"
    assert settings["NoNewPrivileges"] == "yes"
    assert settings["ProtectSystem"] == "strict"
    assert str(example_settings().spool) in settings["ReadWritePaths"].split()


# --- Postfix ---------------------------------------------------------------------------------


def pipe_argv(text: str) -> tuple[str, list[str]]:
    found = re.search(r"argv=(\S+) (.*)$", text, re.M)
    assert found, "no argv= in the text"
    return found.group(1), shlex.split(found.group(2))


def test_the_postfix_pipe_runs_a_real_command() -> None:
    binary, argv = pipe_argv(read("postfix/pipe/master.cf"))
    assert binary == BINARY
    args = accepts(argv)
    assert (args.command, args.config_file, args.envelope_from) == ("mail", CONFIG, "${sender}")
    assert not args.no_process


def test_the_postfix_pipe_readme_no_process_variant_is_real() -> None:
    binary, argv = pipe_argv(read("postfix/pipe/README.md").split("## `--no-process`")[1])
    assert binary == BINARY
    args = accepts(argv)
    assert args.no_process and args.envelope_from == "${sender}"


def test_the_postfix_pipe_transport_is_defined_and_routes_the_servers_address() -> None:
    master = read("postfix/pipe/master.cf")
    service = re.search(r"^(\S+)\s+unix\s+-\s+n\s+n\s+-\s+\S+\s+pipe$", master, re.M)
    assert service, "no pipe service line in master.cf"
    name = service.group(1)
    address = example_settings().address
    assert re.search(rf"^{re.escape(address)}\s+{name}:$", read("postfix/pipe/transport"), re.M)
    main = read("postfix/pipe/main.cf")
    assert f"{name}_destination_recipient_limit = 1" in main
    assert address in main  # the only recipient accepted


def test_the_postfix_relay_sends_the_domain_to_the_listener() -> None:
    settings = example_settings()
    domain = settings.address.rpartition("@")[2]
    transport = read("postfix/relay/transport")
    next_hop = f"smtp:[{settings.listen_host}]:{settings.listen_port}"
    assert re.search(rf"^{re.escape(domain)}\s+{re.escape(next_hop)}$", transport, re.M)
    main = read("postfix/relay/main.cf")
    assert re.search(rf"^relay_domains = .*\b{re.escape(domain)}\b", main, re.M)
    assert settings.address in main
    # ... and the answers go back through the same Postfix.
    assert settings.relay_host_port == ("127.0.0.1", 25)


# --- container -------------------------------------------------------------------------------


def dockerfile_list(instruction: str) -> list[str]:
    found = re.search(rf"^{instruction} \[(.*)\]$", read("Dockerfile"), re.M)
    assert found, f"no exec-form {instruction} in the Dockerfile"
    return [word.strip().strip('"') for word in found.group(1).split(",")]


def test_the_dockerfile_runs_a_real_command_by_default() -> None:
    dockerfile = read("Dockerfile")
    assert re.search(r"^FROM python:3\.11-slim$", dockerfile, re.M)
    assert re.search(r"^USER pbmserv$", dockerfile, re.M)
    assert "pip install '.[postgres]'" in dockerfile
    # python:3.11-slim has no font: board pictures would have no letters or coordinates.
    assert re.search(r"apt-get install -y --no-install-recommends fonts-dejavu-core", dockerfile)
    assert re.search(r"^EXPOSE 2525$", dockerfile, re.M)
    assert dockerfile_list("ENTRYPOINT") == ["pbmserv"]
    args = accepts(dockerfile_list("CMD"))
    assert (args.command, setting_overrides(args)["listen"]) == ("serve", "0.0.0.0:2525")


def compose_services() -> dict[str, dict]:
    """The compose file's services: parsed with PyYAML when it is there, else read as text."""
    text = read("compose.yaml")
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        yaml = None
    if yaml is not None:
        services = yaml.safe_load(text)["services"]
        assert isinstance(services, dict)
        return services
    # Without PyYAML: the top-level service blocks, their command, image and conditions.
    body = text.split("\nservices:\n", 1)[1].split("\nvolumes:\n", 1)[0]
    services: dict[str, dict] = {}
    for name, block in re.findall(r"^  (\w+):\n((?:    .*\n|\s*\n)*)", body + "\n", re.M):
        service: dict = {}
        command = re.search(r"^    command: \[(.*)\]$", block, re.M)
        if command:
            service["command"] = [w.strip().strip('"') for w in command.group(1).split(",")]
        image = re.search(r"^    image: (\S+)$", block, re.M)
        if image:
            service["image"] = image.group(1)
        conditions = re.findall(r"^      (\w+):\n        condition: (\w+)$", block, re.M)
        if conditions:
            service["depends_on"] = {dep: {"condition": cond} for dep, cond in conditions}
        if re.search(r"^    healthcheck:$", block, re.M):
            service["healthcheck"] = True
        services[name] = service
    return services


def test_the_compose_file_migrates_then_serves_on_postgresql() -> None:
    services = compose_services()
    assert set(services) == {"db", "migrate", "server"}
    assert services["db"]["image"] == "postgres:15"
    assert services["db"]["healthcheck"]
    migrate = accepts(services["migrate"]["command"])
    assert (migrate.command, migrate.db_command) == ("db", "upgrade")
    server = accepts(services["server"]["command"])
    assert (server.command, setting_overrides(server)["listen"]) == ("serve", "0.0.0.0:2525")
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    waits = services["server"]["depends_on"]
    assert waits["migrate"]["condition"] == "service_completed_successfully"
    text = read("compose.yaml")
    assert re.search(r"^\s+PBMSERV_DB: postgresql\+psycopg://\S+@db:5432/", text, re.M)
    assert re.search(r"^\s+context: \.\.$", text, re.M)
    assert re.search(r"^\s+dockerfile: deploy/Dockerfile$", text, re.M)
    assert re.search(r"^\s+- db-data:/var/lib/postgresql/data$", text, re.M)
    # No password to fall back on: compose refuses to start without one of the operator's.
    assert "${POSTGRES_PASSWORD:-" not in text
    assert text.count("${POSTGRES_PASSWORD:?") == 2


def test_every_variable_the_container_files_set_is_one_pbmserv_reads() -> None:
    known = set(ENV_NAMES.values()) | {CONFIG_ENV}
    used = set(re.findall(r"\b(PBMSERV_[A-Z_]+)\b", read("Dockerfile") + read("compose.yaml")))
    assert used and used <= known, sorted(used - known)


# --- documentation ---------------------------------------------------------------------------


def documented_commands(text: str) -> list[list[str]]:
    """The concrete pbmserv command lines in a document's code blocks (not syntax summaries:
    lines with `[`, `|` or `...` are skipped)."""
    commands = []
    for block in re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            found = re.search(rf"(?:^|[\s/])pbmserv ((?:{'|'.join(SUBCOMMANDS)})\b.*)$", line)
            if found and not re.search(r"\[|\||\.\.\.", found.group(1)):
                commands.append(shlex.split(found.group(1), comments=True))
    return commands


@pytest.mark.parametrize(
    "document", ["OPERATIONS.md", "postfix/pipe/README.md", "postfix/relay/README.md"]
)
def test_the_documented_commands_are_real(document: str) -> None:
    commands = documented_commands(read(document))
    assert commands, f"no pbmserv command found in {document}"
    for argv in commands:
        accepts(argv)


def test_the_operations_guide_shows_every_admin_group() -> None:
    shown = {argv[1] for argv in documented_commands(read("OPERATIONS.md")) if argv[0] == "admin"}
    groups = set(subcommands(subcommands(build_parser())["admin"]))
    assert "users" in groups and groups <= shown, sorted(groups - shown)


def test_the_readme_shows_every_admin_group() -> None:
    """The README's summaries (``pbmserv admin inbox|outbox list ...``) name every group."""
    readme = (DEPLOY.parent / "README.md").read_text(encoding="utf-8")
    shown = {g for words in re.findall(r"pbmserv admin (\S+)", readme) for g in words.split("|")}
    groups = set(subcommands(subcommands(build_parser())["admin"]))
    assert "broadcast" in groups and groups <= shown, sorted(groups - shown)


@pytest.mark.parametrize("kind", ["pipe", "relay"])
def test_the_postfix_examples_deliver_the_seats_reply_addresses(kind: str) -> None:
    """Without recipient_delimiter, pbmserv+TAG@domain matches no recipient map and bounces."""
    main = read(f"postfix/{kind}/main.cf")
    assert re.search(r"^recipient_delimiter = \+$", main, re.M)


def test_the_units_documentation_is_installed_by_the_procedure() -> None:
    """`systemctl help pbmserv` opened a path nothing had installed."""
    found = re.search(r"^Documentation=file://(\S+)$", read("systemd/pbmserv.service"), re.M)
    assert found, "no Documentation= line"
    installed = found.group(1)
    install = read("OPERATIONS.md").split("## Install", 1)[1].split("\n## ", 1)[0]
    assert re.search(rf"^install .*deploy/OPERATIONS\.md {re.escape(installed)}$", install, re.M)
    assert installed.endswith("/OPERATIONS.md")
