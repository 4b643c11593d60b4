"""The one error of the settings."""

from __future__ import annotations


class ConfigError(ValueError):
    """The configuration file or a setting's value is wrong; the message says which."""
