"""The random baseline the experts are measured against (not an expert, not registered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


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
