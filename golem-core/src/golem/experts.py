"""The scripted-expert interface: policies that read the engine's privileged state.

Experts see what the learner never does (object positions, labels, sectors,
game variables) and act through the same action profile as the agent. They
produce the demonstrations that behavioural cloning learns from.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar


class Expert(ABC):
    """A scripted policy for one or more scenarios.

    Class attributes:
        name: component name (usually the scenario it plays, e.g. ``basic``).
        scenarios: scenario names it is written for.
    """

    name: ClassVar[str]
    scenarios: ClassVar[tuple[str, ...]]

    def __init__(self, action_names: Sequence[str]) -> None:
        self.action_names = tuple(action_names)
        self.index = {a: i for i, a in enumerate(self.action_names)}

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
