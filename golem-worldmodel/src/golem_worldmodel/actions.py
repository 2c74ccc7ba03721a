"""The controller's discrete actions and how they map onto the profile's buttons.

take_cover needs only strafing, so the world model works with three actions,
as World Models did: ``0`` stand still, ``1`` MOVE_LEFT, ``2`` MOVE_RIGHT. The
store keeps the profile's 0/1 button vectors (``actions [T, A]``); these helpers
convert both ways.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from golem.errors import GolemError

#: Discrete action index → the buttons it presses.
DISCRETE: tuple[tuple[str, ...], ...] = ((), ("MOVE_LEFT",), ("MOVE_RIGHT",))
N_ACTIONS = len(DISCRETE)
NAMES: tuple[str, ...] = ("NOOP", "MOVE_LEFT", "MOVE_RIGHT")


def button_table(action_names: Sequence[str]) -> np.ndarray:
    """``[N_ACTIONS, A]`` uint8: row ``k`` is the button vector of discrete action ``k``.

    Raises:
        GolemError: the profile lacks MOVE_LEFT or MOVE_RIGHT.
    """
    index = {a: i for i, a in enumerate(action_names)}
    table = np.zeros((N_ACTIONS, len(action_names)), np.uint8)
    for k, pressed in enumerate(DISCRETE):
        for name in pressed:
            if name not in index:
                raise GolemError(f"the action profile has no {name} button; the world model needs MOVE_LEFT/MOVE_RIGHT")
            table[k, index[name]] = 1
    return table


def to_discrete(buttons: np.ndarray, action_names: Sequence[str]) -> np.ndarray:
    """``[T, A]`` 0/1 button vectors → ``[T]`` int64 discrete actions.

    Left alone → 1, right alone → 2, anything else (nothing, both, other buttons) → 0.
    """
    index = {a: i for i, a in enumerate(action_names)}
    left = buttons[:, index["MOVE_LEFT"]].astype(bool)
    right = buttons[:, index["MOVE_RIGHT"]].astype(bool)
    out = np.zeros(len(buttons), np.int64)
    out[left & ~right] = 1
    out[right & ~left] = 2
    return out
