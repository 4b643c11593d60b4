"""Options that several commands of the command line share."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--config and --db, which every subcommand takes."""
    parser.add_argument(
        "--config",
        type=Path,
        help="TOML settings file (env PBMSERV_CONFIG); environment and flags override it",
    )
    parser.add_argument(
        "--db", dest="db_url", help="database URL (env PBMSERV_DB; default sqlite:///pbmserv.db)"
    )
