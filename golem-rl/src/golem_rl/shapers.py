"""Reward shapers: golem-rl's own (the change of one game variable each, and ``explore``: new squares of the map
visited), and the weighted sum a run uses.

A shaper (registered through ``register_reward_shapers``) reads game variables just before a
decision and just after the tics it was held for, and returns an extra reward. ``rl.shapers``
names the ones a run adds to the scenario's reward, with a weight each:
``--set 'rl.shapers={kills = 1.0, health = 0.01}'``. A shaper that keeps something per episode has
``begin()``, called as each episode starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from golem.errors import GolemError

if TYPE_CHECKING:
    from golem.registry import Registry
    from golem.settings import GolemSettings


class VariableChange:
    """The change of one game variable over a decision: ``after[v] − before[v]``."""

    variable: ClassVar[str] = ""

    def __init__(self, settings: GolemSettings | None = None) -> None:
        self.variables: tuple[str, ...] = (self.variable,)

    def __call__(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        return float(after[self.variable]) - float(before[self.variable])


class Kills(VariableChange):
    """``kills``: monsters killed by the decision (``KILLCOUNT``)."""

    variable = "KILLCOUNT"


class Damage(VariableChange):
    """``damage``: damage the player dealt (``DAMAGECOUNT``, hit points)."""

    variable = "DAMAGECOUNT"


class Health(VariableChange):
    """``health``: the change of the player's health (``HEALTH``): negative when hurt, positive on a pick-up."""

    variable = "HEALTH"


class Ammo(VariableChange):
    """``ammo``: the change of the pistol's and chaingun's ammunition (``AMMO2``): negative per round fired."""

    variable = "AMMO2"


class Items(VariableChange):
    """``items``: items picked up (``ITEMCOUNT``)."""

    variable = "ITEMCOUNT"


class Frags(VariableChange):
    """``frags``: players and bots killed, minus deaths by one's own hand (``FRAGCOUNT``; network games).

    The engine's ``frag_reward`` and ``death_penalty`` pay nothing for a death by one's own rocket or barrel;
    this shaper costs it one frag, as the scoreboard counts it.
    """

    variable = "FRAGCOUNT"


class Explore:
    """``explore``: 1 for each decision that ends in a square of the map the player had not stood in this episode.

    The map is cut into squares of :attr:`cell` map units (64: a corridor's width on generated maps);
    the square of the episode's first position counts as visited. A count-based exploration bonus
    (as in Bellemare et al., 2016, with counts of 0 or 1 per episode) for maps whose only reward is the exit.
    """

    cell: ClassVar[float] = 64.0

    def __init__(self, settings: GolemSettings | None = None) -> None:
        self.variables: tuple[str, ...] = ("POSITION_X", "POSITION_Y")
        self._seen: set[tuple[int, int]] = set()

    def begin(self) -> None:
        """An episode starts: nothing visited yet."""
        self._seen.clear()

    def _square(self, variables: Mapping[str, float]) -> tuple[int, int]:
        return (
            int(float(variables["POSITION_X"]) // self.cell),
            int(float(variables["POSITION_Y"]) // self.cell),
        )

    def __call__(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        if not self._seen:
            self._seen.add(self._square(before))
        square = self._square(after)
        if square in self._seen:
            return 0.0
        self._seen.add(square)
        return 1.0


#: golem-rl's shapers by name, registered through ``register_reward_shapers``.
SHAPERS: dict[str, type[VariableChange] | type[Explore]] = {
    "kills": Kills,
    "damage": Damage,
    "health": Health,
    "ammo": Ammo,
    "items": Items,
    "frags": Frags,
    "explore": Explore,
}


class Shaping:
    """The shapers a run selected (``rl.shapers``), weighted and summed; built in each rollout worker.

    Attributes:
        variables: every game variable the shapers read (``vizdoom.GameVariable`` names), sorted.
    """

    def __init__(self, weighted: Mapping[str, tuple[float, Any]]) -> None:
        self._terms = [(name, float(w), shaper) for name, (w, shaper) in weighted.items()]
        self.variables: tuple[str, ...] = tuple(sorted({v for _, _, s in self._terms for v in s.variables}))

    def __bool__(self) -> bool:
        return bool(self._terms)

    def begin(self) -> None:
        """An episode starts: shapers that keep something per episode (``begin()``) forget it."""
        for _, _, shaper in self._terms:
            if callable(getattr(shaper, "begin", None)):
                shaper.begin()

    def __call__(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        """Σ weight · shaper(before, after) over the selected shapers."""
        return sum(w * float(shaper(before, after)) for _, w, shaper in self._terms)


def build_shaping(settings: GolemSettings, registry: Registry, weights: Mapping[str, float]) -> Shaping:
    """The weighted shapers named in ``weights`` (``rl.shapers``), built with ``settings``.

    Raises:
        GolemError: an unknown shaper (the known ones listed), or one that reads an unknown game variable.
    """
    import vizdoom

    built: dict[str, tuple[float, Any]] = {}
    for name, weight in weights.items():
        shaper = registry.get("reward_shapers", name).obj(settings)
        unknown = [v for v in getattr(shaper, "variables", ()) if not hasattr(vizdoom.GameVariable, str(v))]
        if unknown:
            raise GolemError(f"reward shaper {name!r} reads unknown game variable(s) {', '.join(map(str, unknown))}")
        built[name] = (float(weight), shaper)
    return Shaping(built)


def read_variables(game: Any, names: tuple[str, ...]) -> dict[str, float]:
    """``{name: value}`` of the game variables ``names`` now (``vizdoom.GameVariable`` names)."""
    import vizdoom

    return {name: float(game.get_game_variable(getattr(vizdoom.GameVariable, name))) for name in names}


__all__ = ["SHAPERS", "Explore", "Shaping", "VariableChange", "build_shaping", "read_variables"]
