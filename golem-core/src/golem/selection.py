"""Choosing components by name: ``--plugin focal``, ``--plugin no:thermal``.

The category of a bare name is looked up in the registry; ``category:name``
(e.g. ``losses:focal``) disambiguates a name used in two categories. The
choice becomes a settings override, so ``golem config show`` reports it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from golem.errors import SettingsError, UnknownComponentError
from golem.registry import CATEGORIES, SINGULAR, Component, Registry
from golem.settings import GolemSettings

#: Categories chosen through a setting: category → (dotted key, many allowed).
SELECTABLE: dict[str, tuple[str, bool]] = {
    "sensors": ("brain.sensors", True),
    "models": ("brain.model", False),
    "losses": ("training.loss", False),
    "samplers": ("training.sampler", False),
    "augmentations": ("training.augmentations", True),
}

#: How components of the other categories are chosen, for the error message.
CHOSEN_ELSEWHERE: dict[str, str] = {
    "experts": "choose an expert with `golem run record --expert NAME`",
    "environments": "environments are chosen by the command that runs them",
    "map_generators": "map generators are chosen by the procgen commands",
    "data_formats": "data formats are chosen with `golem data import/export --format NAME`",
    "charts": "charts are drawn by the command that writes their report (golem run audit --chart)",
    "reward_shapers": "reward shapers are chosen with --set rl.shapers (golem rl finetune)",
}


def _known_everywhere(registry: Registry) -> str:
    parts = [f"{cat}: {registry.known(cat)}" for cat in SELECTABLE]
    return "; ".join(parts)


def lookup(registry: Registry, ref: str) -> Component:
    """The component named by ``ref`` (``name`` or ``category:name``)."""
    category, sep, name = ref.partition(":")
    if sep:
        if category not in CATEGORIES:
            raise UnknownComponentError(f"unknown category {category!r} in {ref!r}; known: {', '.join(CATEGORIES)}")
        return registry.get(category, name)
    matches = registry.find(ref)
    if not matches:
        everything = [c.name for c in registry]
        hint = difflib.get_close_matches(ref, everything, n=1)
        did_you_mean = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise UnknownComponentError(f"unknown component {ref!r}{did_you_mean}; known {_known_everywhere(registry)}")
    if len(matches) > 1:
        options = ", ".join(f"{c.category}:{c.name}" for c in matches)
        raise UnknownComponentError(f"{ref!r} names components in several categories; use one of {options}")
    return matches[0]


def plugin_overrides(flags: Iterable[str], settings: GolemSettings, registry: Registry) -> dict[str, Any]:
    """Turn ``--plugin`` flags into dotted settings overrides.

    ``NAME`` selects a model/loss/sampler or adds a sensor or augmentation;
    ``no:NAME`` removes a sensor or augmentation (a selected model, loss or
    sampler cannot be disabled, only replaced). An augmentation with a
    ``switch`` setting (``mirror``: ``training.mirror``) sets that instead.

    Raises:
        UnknownComponentError: the name is not registered (lists the known ones).
        SettingsError: the component cannot be chosen this way.
    """
    dumped = settings.model_dump()
    out: dict[str, Any] = {}

    def current(key: str) -> Any:
        if key in out:
            return out[key]
        node: Any = dumped
        for part in key.split("."):
            node = node[part]
        return node

    for flag in flags:
        disable = flag.startswith("no:")
        ref = flag[3:] if disable else flag
        comp = lookup(registry, ref)
        if comp.category not in SELECTABLE:
            raise SettingsError(
                f"--plugin {flag}: {comp.name!r} is {SINGULAR[comp.category]!s}; {CHOSEN_ELSEWHERE[comp.category]}"
            )
        key, many = SELECTABLE[comp.category]
        switch = getattr(comp.obj, "switch", None) if comp.category == "augmentations" else None
        if switch:
            out[switch] = not disable
        elif many:
            names = [n for n in current(key) if n != comp.name]
            out[key] = names if disable else names + [comp.name]
        elif disable:
            if current(key) == comp.name:
                raise SettingsError(
                    f"--plugin {flag}: {comp.name!r} is the selected {SINGULAR[comp.category]}; "
                    f"select another with --plugin NAME (known: {registry.known(comp.category)})"
                )
        else:
            out[key] = comp.name
    return out


def check_selected(settings: GolemSettings, registry: Registry, categories: Iterable[str] = tuple(SELECTABLE)) -> None:
    """Fail with one line if a selected component (from any source) is not installed."""
    dumped = settings.model_dump()
    for category in categories:
        key, many = SELECTABLE[category]
        node: Any = dumped
        for part in key.split("."):
            node = node[part]
        for name in node if many else [node]:
            try:
                comp = registry.get(category, name)
            except UnknownComponentError as exc:
                raise UnknownComponentError(f"{key}: {exc}") from None
            switch = getattr(comp.obj, "switch", None) if category == "augmentations" else None
            if switch:
                raise SettingsError(
                    f"{key}: {name!r} is switched by {switch} (--plugin {name} or --plugin no:{name}), not listed"
                )
