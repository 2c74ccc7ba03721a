"""Golem: agents that learn to play Doom from what they see and hear."""

from __future__ import annotations

from importlib import metadata

# Before anything imports torch: OpenMP threads sleep while they wait (see golem.threads).
from golem.threads import wait_passively

wait_passively()

from golem.logs import default_to_stderr  # noqa: E402
from golem.plugins import hookimpl  # noqa: E402

default_to_stderr()

try:
    __version__ = metadata.version("golem-core")
except metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"

__all__ = ["__version__", "hookimpl"]
