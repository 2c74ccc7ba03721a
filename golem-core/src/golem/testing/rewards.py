"""Contract checks for reward-shaper plugins: ``assert_reward_shaper_contract(cls)``.

A shaper is ``cls(settings)`` with ``variables`` (``vizdoom.GameVariable`` names) and
``__call__(before, after) -> float`` over those variables just before and just after a
decision. No engine is started: the shaper gets made-up values.
"""

from __future__ import annotations

import math
import random
from typing import Any

from golem.settings import GolemSettings


def assert_reward_shaper_contract(cls: Any, settings: GolemSettings | None = None, *, seed: int = 0) -> Any:
    """Check that ``cls`` builds a well-behaved reward shaper; return the built shaper.

    Checks: ``variables`` is a tuple of ``vizdoom.GameVariable`` names; the reward is a finite
    float for ordinary and extreme values (±1e6); the same arguments give the same reward (a
    pure function: it runs in many workers; a shaper with ``begin()``, which keeps what an episode
    did, after ``begin()``); the arguments are not changed; and no change between ``before`` and
    ``after`` gives a finite reward.

    Raises:
        AssertionError: naming the first property that fails.
    """
    import vizdoom

    shaper = cls(settings if settings is not None else GolemSettings())
    variables = getattr(shaper, "variables", None)
    assert isinstance(variables, tuple), f"variables must be a tuple of game variable names, got {variables!r}"
    for name in variables:
        assert isinstance(name, str) and hasattr(vizdoom.GameVariable, name), (
            f"variables names {name!r}, which is not a vizdoom.GameVariable"
        )
    rng = random.Random(seed)
    cases = [
        ({v: 0.0 for v in variables}, {v: 0.0 for v in variables}),
        ({v: float(rng.randint(0, 100)) for v in variables}, {v: float(rng.randint(0, 100)) for v in variables}),
        ({v: -1e6 for v in variables}, {v: 1e6 for v in variables}),
    ]
    episodic = callable(getattr(shaper, "begin", None))  # keeps what an episode did; begin() forgets it
    for before, after in cases:
        kept = (dict(before), dict(after))
        if episodic:
            shaper.begin()
        reward = shaper(before, after)
        assert isinstance(reward, (int, float)) and not isinstance(reward, bool), (
            f"a shaper returns a float, got {type(reward).__name__}"
        )
        assert math.isfinite(float(reward)), f"reward {reward} is not finite for {before} → {after}"
        if episodic:
            shaper.begin()
        assert shaper(before, after) == reward, (
            "the same arguments gave another reward: a shaper must be pure (one with begin(): after begin())"
        )
        assert (before, after) == kept, "the shaper changed its arguments"
    return shaper


__all__ = ["assert_reward_shaper_contract"]
