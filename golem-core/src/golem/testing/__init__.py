"""Contract helpers for plugin authors: call them from your plugin's own tests.

    from golem.testing import assert_loss_contract, assert_plugin_registers

    def test_my_loss():
        comp = assert_plugin_registers(my_plugin, "losses", "my_loss")
        assert_loss_contract(comp.obj)

Helpers are imported lazily so that using one does not import torch or
ViZDoom unless it needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HELPERS = {
    "assert_plugin_registers": "golem.testing.plugins",
    "load_with": "golem.testing.plugins",
    "assert_sensor_contract": "golem.testing.sensors",
    "assert_loss_contract": "golem.testing.losses",
    "assert_expert_contract": "golem.testing.experts",
    "assert_model_contract": "golem.testing.models",
    "random_inputs": "golem.testing.models",
    "assert_sampler_contract": "golem.testing.samplers",
    "assert_augmentation_contract": "golem.testing.augmentations",
    "assert_map_generator_contract": "golem.testing.worlds",
    "assert_reward_shaper_contract": "golem.testing.rewards",
    # Commands need the CLI (golem-cli): its helper, re-exported for plugins' tests.
    "assert_command_contract": "golem_cli.testing",
}

__all__ = sorted(_HELPERS)


def __getattr__(name: str) -> Any:
    if name in _HELPERS:
        return getattr(import_module(_HELPERS[name]), name)
    raise AttributeError(f"module 'golem.testing' has no attribute {name!r}")
