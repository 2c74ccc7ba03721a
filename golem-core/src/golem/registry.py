"""The component registry: every sensor, model, loss, … that plugins register."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from golem.errors import DuplicateComponentError, UnknownComponentError

#: Component categories, in the order ``golem plugins list`` shows them.
#: Each maps to its registration hook ``register_<category>``.
CATEGORIES: tuple[str, ...] = (
    "sensors",
    "data_formats",
    "models",
    "losses",
    "samplers",
    "augmentations",
    "map_generators",
    "experts",
    "environments",
    "charts",
    "reward_shapers",
)

SINGULAR: dict[str, str] = {
    "sensors": "sensor",
    "data_formats": "data format",
    "models": "model",
    "losses": "loss",
    "samplers": "sampler",
    "augmentations": "augmentation",
    "map_generators": "map generator",
    "experts": "expert",
    "environments": "environment",
    "charts": "chart",
    "reward_shapers": "reward shaper",
}


#: The distributions that ship the components the settings default to, and the experts of the shipped
#: scenarios: a missing one is named with what to install rather than only as unknown.
PROVIDERS: dict[tuple[str, str], str] = {
    ("models", "cfc"): "golem-models",
    ("models", "lstm"): "golem-models",
    ("losses", "focal"): "golem-losses",
    ("losses", "bce"): "golem-losses",
    ("environments", "vizdoom"): "golem-farama",
    ("data_formats", "minari"): "golem-farama",
    ("charts", "audit"): "golem-explain",
    **{("augmentations", name): "golem-augment" for name in ("shift", "colour", "cutout", "conv")},
    **{
        ("experts", name): "golem-experts"
        for name in (
            "basic",
            "deadly_corridor",
            "deathmatch",
            "defend_the_center",
            "defend_the_line",
            "health_gathering",
            "health_gathering_supreme",
            "my_way_home",
            "predict_position",
            "take_cover",
        )
    },
}


@dataclass(frozen=True)
class Owner:
    """Who registered a component: the plugin (entry-point name) and its distribution."""

    plugin: str
    distribution: str
    version: str

    def __str__(self) -> str:
        if self.plugin == self.distribution:
            return self.distribution
        return f"{self.plugin} ({self.distribution})"


@dataclass(frozen=True)
class Component:
    """One registered component.

    Attributes:
        settings: the component's own settings model (a
            :class:`golem.settings.ComponentSettings` subclass with its dotted ``key``), or ``None``.
    """

    name: str
    category: str
    obj: Any
    owner: Owner
    settings: Any = None


def settings_model_of(obj: Any, given: Any = None) -> Any:
    """The settings model a component declares: ``given`` (``register(..., settings=M)``), else
    ``obj.settings_model``."""
    model = given if given is not None else getattr(obj, "settings_model", None)
    if model is None:
        return None
    from pydantic import BaseModel

    if not (isinstance(model, type) and issubclass(model, BaseModel)) or not getattr(model, "key", ""):
        raise ValueError(f"settings model {model!r} must be a ComponentSettings subclass with a dotted `key`")
    return model


class Registry:
    """Components by category and name. Names are unique within a category."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Component]] = {c: {} for c in CATEGORIES}

    def add(self, category: str, name: str, obj: Any, owner: Owner, settings: Any = None) -> Component:
        """Register ``obj`` as ``name`` (with its settings model, if any); a clash raises
        :class:`DuplicateComponentError`.

        A settings key already owned by another component is a clash too.
        """
        if category not in self._items:
            raise ValueError(f"unknown category {category!r}; known: {', '.join(CATEGORIES)}")
        if not isinstance(name, str) or not name or ":" in name or "," in name:
            raise ValueError(f"invalid {SINGULAR[category]} name {name!r}: a non-empty string without ':' or ','")
        existing = self._items[category].get(name)
        if existing is not None:
            raise DuplicateComponentError(
                f"{SINGULAR[category]} {name!r} is registered by both {existing.owner} and {owner}"
            )
        model = settings_model_of(obj, settings)
        if model is not None:
            other = next((c for c in self if c.settings is not None and c.settings.key == model.key), None)
            if other is not None:
                raise DuplicateComponentError(
                    f"settings section {model.key!r} is declared by both {other.owner} ({other.name}) "
                    f"and {owner} ({name})"
                )
        comp = Component(name=name, category=category, obj=obj, owner=owner, settings=model)
        self._items[category][name] = comp
        return comp

    def get(self, category: str, name: str) -> Component:
        """The component ``name`` of ``category``; unknown names list the known ones."""
        try:
            return self._items[category][name]
        except KeyError:
            hint = PROVIDERS.get((category, name))
            where = f" (it comes with {hint}: pip install {hint})" if hint else ""
            raise UnknownComponentError(
                f"unknown {SINGULAR[category]} {name!r}{where}; known: {self.known(category)}"
            ) from None

    def known(self, category: str) -> str:
        """The known names of ``category`` as one comma-separated string."""
        names = sorted(self._items[category])
        return ", ".join(names) if names else "(none installed)"

    def names(self, category: str) -> list[str]:
        """Sorted names registered in ``category``."""
        return sorted(self._items[category])

    def find(self, name: str) -> list[Component]:
        """Every component called ``name``, across categories."""
        return [items[name] for items in self._items.values() if name in items]

    def __iter__(self) -> Iterator[Component]:
        for category in CATEGORIES:
            yield from (self._items[category][n] for n in sorted(self._items[category]))

    def settings_sections(self) -> dict[str, Any]:
        """``{dotted key: settings model}`` of every component that declares settings."""
        return {c.settings.key: c.settings for c in self if c.settings is not None}

    def by_owner(self, plugin: str) -> dict[str, list[str]]:
        """``{category: [names]}`` registered by the plugin named ``plugin``."""
        out: dict[str, list[str]] = {}
        for comp in self:
            if comp.owner.plugin == plugin:
                out.setdefault(comp.category, []).append(comp.name)
        return out
