"""Options that several commands of the command line share."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--config and --db, which every subcommand takes: before its action as well as after
    (`pbmserv admin --config F outbox list`). Unset, they leave no attribute, so that an
    action's parser never overwrites what its group's parser read."""
    parser.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="TOML settings file (env PBMSERV_CONFIG); environment and flags override it",
    )
    parser.add_argument(
        "--db",
        dest="db_url",
        default=argparse.SUPPRESS,
        help="database URL (env PBMSERV_DB; default sqlite:///pbmserv.db)",
    )
