"""The core's built-in components, registered through the same hooks as any plugin."""

from __future__ import annotations

from golem.plugins import hookimpl


@hookimpl
def register_sensors(register) -> None:
    from golem.builtin.visual import VisualSensor

    register("visual", VisualSensor)


@hookimpl
def register_data_formats(register) -> None:
    from golem.data.store.npz import NpzFormat

    register("npz", NpzFormat())


@hookimpl
def register_samplers(register) -> None:
    from golem.data.sampling import StatefulStratifiedSampler

    register("stateful", StatefulStratifiedSampler)


@hookimpl
def register_augmentations(register) -> None:
    from golem.builtin.mirror import MirrorAugmentation

    register(MirrorAugmentation.name, MirrorAugmentation)


@hookimpl
def register_experts(register) -> None:
    from golem.runtime.random_policy import RandomExpert

    register(RandomExpert.name, RandomExpert)
