"""Settings: defaults, then an optional TOML file, then environment variables, then flags.

The settings object is passed explicitly to whatever needs it; there is no global config.
The TOML file uses the field names of :class:`Settings` as top-level keys, and per-game idle
limits in ``[games.NAME]`` tables (see deploy/pbmserv.toml for a commented example).

:class:`Settings` is one flat object composed of parts by subject, a module each: the server
itself (``server``), mail in (``inbound``), mail out (``outbound``), the processes
(``runtime``), accounts and limits (``accounts``), clocks and idle boards (``timing``), play
(``play``) and the robots (``robots``). ``settings`` composes them and tells which part a
setting is of; ``sources`` names the environment variables and reads the files, ``loading``
converts, checks and layers the values, ``showing`` masks them for printing.
"""

from pbmserv.config.accounts import AccountSettings
from pbmserv.config.errors import ConfigError
from pbmserv.config.inbound import InboundSettings
from pbmserv.config.loading import LOG_FORMATS, RELAY_TLS_LEVELS, load_settings
from pbmserv.config.outbound import OutboundSettings
from pbmserv.config.play import PlaySettings
from pbmserv.config.robots import RobotSettings
from pbmserv.config.runtime import RuntimeSettings
from pbmserv.config.server import ServerSettings
from pbmserv.config.settings import PARTS, Settings, part_fields, part_of
from pbmserv.config.showing import (
    SECRET_FIELDS,
    describe_settings,
    describe_settings_by_part,
    mask_url,
)
from pbmserv.config.sources import (
    CONFIG_ENV,
    ENV_FILE_KEY,
    ENV_NAMES,
    read_config_file,
    read_env_file,
)
from pbmserv.config.timing import IdleLimits, TimingSettings

__all__ = [
    "CONFIG_ENV",
    "ENV_FILE_KEY",
    "ENV_NAMES",
    "LOG_FORMATS",
    "PARTS",
    "RELAY_TLS_LEVELS",
    "SECRET_FIELDS",
    "AccountSettings",
    "ConfigError",
    "IdleLimits",
    "InboundSettings",
    "OutboundSettings",
    "PlaySettings",
    "RobotSettings",
    "RuntimeSettings",
    "ServerSettings",
    "Settings",
    "TimingSettings",
    "describe_settings",
    "describe_settings_by_part",
    "load_settings",
    "mask_url",
    "part_fields",
    "part_of",
    "read_config_file",
    "read_env_file",
]
