"""The scripted-expert interface: policies that read the engine's privileged state.

Experts see what the learner never does (object positions, labels, sectors,
game variables) and act through the same action profile as the agent. They
produce the demonstrations that behavioural cloning learns from.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from golem.settings import GolemSettings

#: What a look-alike replacement adds to the class name it replaces: ``DoomImp`` → ``DoomImp__golem7``
#: (``golem procgen vary``: the replacement inherits the original's behaviour and changes its look).
VARIANT_SUFFIX = "__golem"
_VARIANT_TAIL = re.compile(rf"(?:{VARIANT_SUFFIX}[0-9]+)+$")


def base_actor_name(name: str) -> str:
    """The class a (possibly replaced) actor stands for: ``name`` without its variant suffixes.

    Experts compare object and label names (``state.objects[i].name``) with this, so they
    read a scenario's variants as they read the scenario: ``"DoomImp__golem7"`` → ``"DoomImp"``;
    any other name is returned unchanged.
    """
    return _VARIANT_TAIL.sub("", name) or name


class Expert(ABC):
    """A scripted policy for one or more scenarios.

    Class attributes:
        name: component name (usually the scenario it plays, e.g. ``basic``).
        scenarios: scenario names it is written for; the first is the one it plays when none is given,
            so it must be one the engine can start alone (not a multiplayer-only map such as ``cig``).
        reference: whether it is the expert a scoreboard scores against (the random expert is not).
        settings_model: the expert's own settings section (a
            :class:`golem.settings.ComponentSettings` with a key under ``experts.``), or ``None``.

    Args:
        action_names: the profile's buttons, in order.
        settings: the run's settings (an expert with a settings section reads it
            with :func:`golem.settings.section`); ``None``: defaults.
    """

    name: ClassVar[str]
    scenarios: ClassVar[tuple[str, ...]]
    reference: ClassVar[bool] = True

    settings_model: ClassVar[Any] = None

    def __init__(self, action_names: Sequence[str], settings: GolemSettings | None = None) -> None:
        from golem.settings import GolemSettings

        self.settings = settings if settings is not None else GolemSettings.model_construct()
        self.action_names = tuple(action_names)
        self.index = {a: i for i, a in enumerate(self.action_names)}

    @property
    def hold(self) -> int:
        """Tics each decision holds its buttons (``game.frame_skip``): rules written per tic scale by it."""
        game = getattr(self.settings, "game", None)
        return max(1, int(getattr(game, "frame_skip", 1) or 1))

    @classmethod
    def plays(cls, scenario: str) -> bool:
        """Whether this expert plays ``scenario`` (a name or a path); default: it is one of :attr:`scenarios`, or
        a look-alike variant of one (:func:`golem.scenarios.variant_of`)."""
        return _named_or_varied(scenario, cls.scenarios)

    def configure(self, game: Any) -> None:
        """Switch on the privileged state this expert reads (before ``init()``)."""

    def reset(self, game: Any) -> None:
        """Called at the start of every episode."""

    @abstractmethod
    def act(self, game: Any, state: Any) -> list[int]:
        """One 0/1 per action name for this tic, from ``game`` and its current ``state``."""

    def press(self, *names: str) -> list[int]:
        """An action vector with ``names`` pressed (names missing from the profile are ignored)."""
        out = [0] * len(self.action_names)
        for n in names:
            if n in self.index:
                out[self.index[n]] = 1
        return out


def expert_plays(cls: Any, scenario: str) -> bool:
    """Whether the expert class ``cls`` plays ``scenario`` (its ``plays`` classmethod, else its ``scenarios``)."""
    plays = getattr(cls, "plays", None)
    return bool(plays(scenario)) if callable(plays) else _named_or_varied(scenario, getattr(cls, "scenarios", ()))


def _named_or_varied(scenario: str, scenarios: Sequence[str]) -> bool:
    """Whether ``scenario`` is one of ``scenarios`` or a variant's ``.cfg``/``.wad`` of one (it plays the same)."""
    from golem.scenarios import variant_of

    return scenario in scenarios or variant_of(scenario) in scenarios
