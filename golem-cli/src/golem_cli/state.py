"""What every command shares: loaded plugins, global flags, and settings resolution."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from golem.plugins import PluginHost
from golem.selection import plugin_overrides
from golem.settings import ResolvedSettings, load_settings, parse_assignment


@dataclass
class AppState:
    """Created once per ``golem`` invocation and passed to commands as ``ctx.obj``."""

    host: PluginHost
    config: Path | None = None
    plugin_flags: list[str] = field(default_factory=list)
    set_flags: list[str] = field(default_factory=list)
    out: Console = field(default_factory=Console)
    err: Console = field(default_factory=lambda: Console(stderr=True))

    def resolve(
        self,
        plugin: list[str] | None = None,
        set_: list[str] | None = None,
        flags: dict[str, Any] | None = None,
    ) -> ResolvedSettings:
        """Settings from defaults, file, environment, ``--set``, ``--plugin`` and command flags.

        Args:
            plugin: the command's own ``--plugin`` flags (after the global ones).
            set_: the command's own ``--set KEY=VALUE`` flags.
            flags: dotted keys set by command options such as ``--epochs``;
                ``None`` values (option not given) are ignored.
        """
        assignments = dict(parse_assignment(a) for a in [*self.set_flags, *(set_ or [])])
        layers: list[tuple[str, dict[str, Any]]] = [("flag --set", assignments)]
        base = load_settings(self.config, layers, registry=self.host.registry)
        chosen = plugin_overrides([*self.plugin_flags, *(plugin or [])], base.settings, self.host.registry)
        layers.append(("flag --plugin", chosen))
        given = {k: v for k, v in (flags or {}).items() if v is not None}
        layers.append(("flag", given))
        return load_settings(self.config, layers, registry=self.host.registry)


def state(ctx: typer.Context) -> AppState:
    """The :class:`AppState` of this invocation."""
    return ctx.find_root().obj
