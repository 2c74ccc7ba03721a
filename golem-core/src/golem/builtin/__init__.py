"""The core's built-in components, registered through the same hooks as any plugin."""

from __future__ import annotations

from golem.plugins import hookimpl


@hookimpl
def register_sensors(register) -> None:
    from golem.builtin.visual import VisualSensor

    register("visual", VisualSensor)


@hookimpl
def register_samplers(register) -> None:
    from golem.data.sampling import StatefulStratifiedSampler

    register("stateful", StatefulStratifiedSampler)


@hookimpl
def register_experts(register) -> None:
    from golem.runtime.random_policy import RandomExpert

    register(RandomExpert.name, RandomExpert)


@hookimpl
def register_environments(register) -> None:
    from golem.extras import available

    if not available("gymnasium"):  # the Gymnasium environment is the gym extra
        return
    from golem.builtin.gym_env import make_vizdoom_env

    register("vizdoom", make_vizdoom_env)
