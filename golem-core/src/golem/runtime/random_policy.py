"""The random baseline the experts are measured against, and the ``random`` expert that records it.

:class:`RandomPolicy` is the scoreboards' baseline; :class:`RandomExpert` wraps it
as an expert of every scenario so ``golem run record --expert random --scenario S``
records a baseline dataset. It never counts as a scenario's expert on a
scoreboard (``reference = False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from golem.experts import Expert


class RandomPolicy:
    """Presses each button independently with probability ``p`` every tic.

    It has the experts' interface (``configure``, ``reset``, ``act``) so the
    same rollout code drives both. Draws come from its own seeded generator,
    so a run is reproducible given ``seed``.
    """

    name = "random"

    def __init__(self, action_names: Sequence[str], seed: int = 0, p: float = 0.5) -> None:
        self.action_names = tuple(action_names)
        self.p = p
        self._rng = np.random.default_rng(seed)

    def configure(self, game: Any) -> None:
        """Nothing to switch on: the random policy reads no state."""

    def reset(self, game: Any) -> None:
        """Nothing to reset: draws are independent across tics."""

    def act(self, game: Any, state: Any) -> list[int]:
        """One independent Bernoulli(``p``) draw per button."""
        return [int(b) for b in self._rng.random(len(self.action_names)) < self.p]


class RandomExpert(Expert):
    """Presses each button independently with probability ½ every decision, on any scenario.

    Its draws come from a generator seeded with the episode's engine seed at
    every :meth:`reset`, so the same seed records the same episode. Without
    ``--scenario`` it plays ``basic``.
    """

    name: ClassVar[str] = "random"
    scenarios: ClassVar[tuple[str, ...]] = ("basic",)
    reference: ClassVar[bool] = False

    @classmethod
    def plays(cls, scenario: str) -> bool:
        """Any scenario: it reads nothing of the game."""
        return True

    def reset(self, game: Any) -> None:
        self._policy = RandomPolicy(self.action_names, seed=int(game.get_seed()))

    def act(self, game: Any, state: Any) -> list[int]:
        return self._policy.act(game, state)
