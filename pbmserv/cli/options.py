"""Options that several commands of the command line share, and the one way a flag becomes a
setting.

A flag that overrides a setting is stored under ``SETTING_PREFIX + name``, never under the bare
setting name: a command's own argument (``admin users set-email USERID address``) can then never
be read as a setting, whatever it is called.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pbmserv.config import Settings, load_settings

SETTING_PREFIX = "setting:"
CONFIG_FILE_DEST = "config_file"


def add_setting_option(
    parser: argparse.ArgumentParser, *flags: str, setting: str, **kwargs: Any
) -> None:
    """A flag that overrides the setting ``setting`` (a field of ``Settings``)."""
    if setting not in Settings.__dataclass_fields__:
        raise ValueError(f"{setting!r} is not a setting")
    if kwargs.get("action") not in ("store_true", "store_false"):
        kwargs.setdefault("metavar", setting.upper())
    parser.add_argument(*flags, dest=SETTING_PREFIX + setting, **kwargs)


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--config and --db, which every subcommand takes: before its action as well as after
    (`pbmserv admin --config F outbox list`). Unset, they leave no attribute, so that an
    action's parser never overwrites what its group's parser read."""
    parser.add_argument(
        "--config",
        dest=CONFIG_FILE_DEST,
        type=Path,
        default=argparse.SUPPRESS,
        help="TOML settings file (env PBMSERV_CONFIG); environment and flags override it",
    )
    add_setting_option(
        parser,
        "--db",
        setting="db_url",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="database URL (env PBMSERV_DB; default sqlite:///pbmserv.db)",
    )


def setting_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The settings given as flags on this command line (None where a flag was not given)."""
    return {
        name.removeprefix(SETTING_PREFIX): value
        for name, value in vars(args).items()
        if name.startswith(SETTING_PREFIX)
    }


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings in effect for a parsed command line: file, environment, then its flags."""
    return load_settings(setting_overrides(args), config_file=getattr(args, CONFIG_FILE_DEST, None))
