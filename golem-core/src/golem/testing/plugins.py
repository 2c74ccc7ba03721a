"""Contract checks for a plugin as a whole: it loads, registers, and names are unique."""

from __future__ import annotations

from typing import Any

from golem.plugins import PluginHost, load_plugins
from golem.registry import CATEGORIES, Component


def load_with(plugin: Any, name: str = "under-test", *, installed: bool = False) -> PluginHost:
    """Load ``plugin`` (a module or object with ``@golem.hookimpl`` functions) like Golem does.

    With ``installed=False`` only the core and ``plugin`` load, so the check
    does not depend on what else is installed.
    """
    return load_plugins(only=None if installed else [], extra=[(name, plugin)])


def assert_plugin_registers(plugin: Any, category: str, name: str) -> Component:
    """Assert that ``plugin`` loads without error and registers ``name`` in ``category``.

    Returns the registered :class:`~golem.registry.Component`.
    """
    assert category in CATEGORIES, f"unknown category {category!r}; known: {CATEGORIES}"
    host = load_with(plugin)
    info = next(p for p in host.plugins if p.name == "under-test")
    assert not info.broken, f"plugin is broken: {info.error}"
    assert name in host.registry.names(category), (
        f"{category} {name!r} not registered; the plugin registered {info.components}"
    )
    return host.registry.get(category, name)
