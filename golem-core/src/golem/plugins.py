"""Loading plugins from the ``golem`` entry-point group into a registry.

Every plugin, the core's built-ins included, is a module named by an entry
point in the ``golem`` group. Loading is fault-tolerant: a plugin that fails to
import, fails a hook, or clashes with another plugin's names is recorded as
*broken* with its error, and everything else loads as usual.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy
import structlog

from golem import hookspecs
from golem.registry import CATEGORIES, Owner, Registry

log = structlog.get_logger("golem.plugins")

GROUP = "golem"
#: The entry-point name of the core's own built-in components; always loaded.
CORE_PLUGIN = "core"
ENV_LOAD_PLUGINS = "GOLEM_LOAD_PLUGINS"

hookimpl = pluggy.HookimplMarker("golem")


@dataclass
class PluginInfo:
    """One plugin as loaded: its entry point, distribution and outcome."""

    name: str
    distribution: str
    version: str
    module: str
    error: str | None = None
    components: dict[str, list[str]] = field(default_factory=dict)

    @property
    def broken(self) -> bool:
        return self.error is not None

    @property
    def owner(self) -> Owner:
        return Owner(plugin=self.name, distribution=self.distribution, version=self.version)


@dataclass
class PluginHost:
    """The plugin manager, the registry it filled, and what loaded or broke."""

    pm: pluggy.PluginManager
    registry: Registry
    plugins: list[PluginInfo]

    @property
    def broken(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.broken]

    def add_commands(self, app: Any) -> None:
        """Call every plugin's ``register_commands(app)``; a failing one is marked broken."""
        for impl in self.pm.hook.register_commands.get_hookimpls():
            info = self._info(impl.plugin_name)
            try:
                impl.function(app=app)
            except Exception as exc:  # a third-party plugin must never take the CLI down
                self._mark_broken(info, exc)

    def _info(self, plugin_name: str) -> PluginInfo:
        return next(p for p in self.plugins if p.name == plugin_name)

    def _mark_broken(self, info: PluginInfo, exc: BaseException) -> None:
        info.error = _one_line(exc)
        log.debug("plugin_broken", plugin=info.name, distribution=info.distribution, error=info.error)
        log.debug("plugin_broken_traceback", plugin=info.name, traceback=traceback.format_exc())


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def new_plugin_manager() -> pluggy.PluginManager:
    """A pluggy manager that knows Golem's hook specifications."""
    pm = pluggy.PluginManager("golem")
    pm.add_hookspecs(hookspecs)
    return pm


def _allowed(env_value: str | None) -> set[str] | None:
    if env_value is None or not env_value.strip():
        return None
    return {part.strip() for part in env_value.split(",") if part.strip()}


def _entry_points() -> list[tuple[metadata.EntryPoint, str, str]]:
    """``(entry point, distribution name, version)`` in the ``golem`` group, core first."""
    found: dict[str, tuple[metadata.EntryPoint, str, str]] = {}
    for dist in metadata.distributions():
        dist_name = dist.metadata["Name"] or "?"
        for ep in dist.entry_points:
            if ep.group == GROUP and ep.name not in found:  # first on sys.path wins, as import does
                found[ep.name] = (ep, dist_name, dist.version or "?")
    return sorted(found.values(), key=lambda t: (t[0].name != CORE_PLUGIN, t[0].name))


def load_plugins(
    *,
    only: Iterable[str] | None = None,
    extra: Iterable[tuple[str, Any]] = (),
) -> PluginHost:
    """Load every ``golem`` entry point and fill a fresh :class:`Registry`.

    Args:
        only: names (entry point or distribution) allowed to load; defaults to
            ``GOLEM_LOAD_PLUGINS`` (comma-separated) when set. The core always loads.
        extra: ``(name, module_or_object)`` plugins registered directly, for tests
            and embedding; they are owned by a pseudo-distribution of the same name.
    """
    allowed = set(only) if only is not None else _allowed(os.environ.get(ENV_LOAD_PLUGINS))
    pm = new_plugin_manager()
    infos: list[PluginInfo] = []
    candidates: list[tuple[PluginInfo, Any]] = []

    for ep, dist_name, version in _entry_points():
        if allowed is not None and ep.name != CORE_PLUGIN and not ({ep.name, dist_name} & allowed):
            continue
        info = PluginInfo(name=ep.name, distribution=dist_name, version=version, module=ep.value)
        infos.append(info)
        try:
            candidates.append((info, ep.load()))
        except Exception as exc:  # import errors of third-party code are data, not crashes
            PluginHost(pm, Registry(), infos)._mark_broken(info, exc)
    for name, plugin in extra:
        info = PluginInfo(name=name, distribution=name, version="0", module=getattr(plugin, "__name__", repr(plugin)))
        infos.append(info)
        candidates.append((info, plugin))

    host = PluginHost(pm=pm, registry=Registry(), plugins=infos)
    for info, plugin in candidates:
        try:
            pm.register(plugin, name=info.name)
        except Exception as exc:  # bad hookimpl signature, duplicate plugin name
            host._mark_broken(info, exc)
            continue
        _register_components(host, info, plugin)
    log.debug("plugins_loaded", loaded=[p.name for p in infos if not p.broken], broken=[p.name for p in host.broken])
    return host


def _register_components(host: PluginHost, info: PluginInfo, plugin: Any) -> None:
    """Run one plugin's registration hooks; commit its components only if all succeed."""
    staged: list[tuple[str, str, Any, Any]] = []
    try:
        for category in CATEGORIES:
            caller = getattr(host.pm.hook, f"register_{category}")
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    impl.function(register=_stager(staged, category))
        trial = Registry()
        for comp in host.registry:
            trial.add(comp.category, comp.name, comp.obj, comp.owner, comp.settings)
        for category, name, obj, settings in staged:
            trial.add(category, name, obj, info.owner, settings)
    except Exception as exc:
        host._mark_broken(info, exc)
        host.pm.unregister(plugin)
        return
    for category, name, obj, settings in staged:
        host.registry.add(category, name, obj, info.owner, settings)
    info.components = host.registry.by_owner(info.name)


def _stager(staged: list[tuple[str, str, Any, Any]], category: str):
    def register(name: str, component: Any, settings: Any = None) -> None:
        staged.append((category, name, component, settings))

    return register
