"""``assert_sensor_contract``: the checks every sensor plugin must pass, for plugin authors' tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from golem.sensors import Sensor
from golem.settings import GolemSettings


class _EmptyState:
    """A game state whose every buffer is missing (``None``)."""

    def __getattr__(self, name: str) -> Any:
        return None


def _check_step(sensor: Sensor, value: np.ndarray, what: str) -> None:
    assert isinstance(value, np.ndarray), f"{sensor.name}: extract({what}) returned {type(value).__name__}, not ndarray"
    assert value.shape == tuple(sensor.shape), f"{sensor.name}: extract({what}) shape {value.shape} != {sensor.shape}"
    assert value.dtype == sensor.dtype, f"{sensor.name}: extract({what}) dtype {value.dtype} != {sensor.dtype}"


def _random_steps(sensor: Sensor, rng: np.random.Generator, lead: tuple[int, ...]) -> np.ndarray:
    shape = lead + tuple(sensor.shape)
    if np.issubdtype(sensor.dtype, np.integer):
        return rng.integers(0, 2 if sensor.dtype == np.bool_ else 256, size=shape).astype(sensor.dtype)
    return rng.standard_normal(shape).astype(sensor.dtype)


def assert_sensor_contract(
    sensor_cls: type[Sensor],
    settings: GolemSettings | None = None,
    *,
    engine: bool = True,
    scenario: str = "basic",
    tics: int = 8,
) -> Sensor:
    """Check that ``sensor_cls`` honours the :class:`golem.sensors.Sensor` contract; return the instance.

    Checks: class attributes; ``extract`` on ``None`` and on a state with no
    buffers gives zeros of :attr:`shape`/:attr:`dtype`; an ``image`` sensor's steps are
    ``[C, H, W]`` and a ``colour`` one's ``[3, H, W]``; with ``engine`` a real
    headless session on ``scenario`` gives well-formed steps for ``tics`` tics
    and a missing state then repeats the last value; ``reset`` forgets it;
    ``mirror`` keeps shape and is an involution; ``to_network`` maps
    ``[B, T, *shape]`` to a float tensor of the same shape; ``cortex()`` maps
    ``[N, *shape]`` to ``[N, out_features]`` (sensors that join another
    cortex instead expose ``channels``).

    Raises:
        AssertionError: naming the sensor and the broken rule.
    """
    import torch

    settings = settings or GolemSettings()
    for attr in ("name", "key", "dtype"):
        assert getattr(sensor_cls, attr, None) is not None, f"{sensor_cls.__name__} lacks class attribute {attr!r}"
    sensor = sensor_cls(settings)
    assert isinstance(sensor, Sensor), f"{sensor_cls.__name__} is not a golem.sensors.Sensor"
    assert isinstance(sensor.dtype, np.dtype), f"{sensor.name}: dtype must be a numpy dtype, got {sensor.dtype!r}"
    shape = tuple(sensor.shape)
    assert shape and all(isinstance(n, int) and n > 0 for n in shape), f"{sensor.name}: bad shape {shape}"
    assert not sensor.image or len(shape) == 3, f"{sensor.name}: an image sensor's steps are [C, H, W], got {shape}"
    assert not sensor.colour or (sensor.image and shape[0] == 3), f"{sensor.name}: a colour sensor is an RGB image"

    zeros = np.zeros(shape, dtype=sensor.dtype)
    for what, state in (("None", None), ("a state without buffers", _EmptyState())):
        value = sensor.extract(state)
        _check_step(sensor, value, what)
        assert np.array_equal(value, zeros), f"{sensor.name}: extract({what}) before any value must be zeros"

    rng = np.random.default_rng(0)
    if engine:
        from golem.runtime.session import Session

        sensor.reset()
        with Session(settings, [sensor], scenario=scenario) as session:
            for _ in range(tics):
                _check_step(sensor, session.observe()[sensor.key], "a real state")
                session.act([0] * len(session.action_names))
            last = session.observe()[sensor.key]
        held = last.copy()
    else:
        held = _random_steps(sensor, rng, ())
        sensor._last = held.copy()
    repeated = sensor.extract(None)
    _check_step(sensor, repeated, "None after a value")
    assert np.array_equal(repeated, held), f"{sensor.name}: a missing state must repeat the last value"
    assert np.array_equal(sensor.extract(_EmptyState()), held), (
        f"{sensor.name}: a missing buffer must repeat the last value"
    )
    sensor.reset()
    assert np.array_equal(sensor.extract(None), zeros), f"{sensor.name}: reset() must forget the held value"

    batch = _random_steps(sensor, rng, (2, 3))
    mirrored = np.asarray(sensor.mirror(batch))
    assert mirrored.shape == batch.shape, f"{sensor.name}: mirror changed shape {batch.shape} → {mirrored.shape}"
    assert np.array_equal(np.asarray(sensor.mirror(mirrored)), batch), f"{sensor.name}: mirror is not an involution"

    net = sensor.to_network(torch.from_numpy(np.ascontiguousarray(batch)))
    assert isinstance(net, torch.Tensor) and net.is_floating_point(), (
        f"{sensor.name}: to_network must return a float tensor"
    )
    assert tuple(net.shape) == batch.shape, f"{sensor.name}: to_network shape {tuple(net.shape)} != {batch.shape}"

    if sensor.joins is None:
        module = sensor.cortex()
        out_features = getattr(module, "out_features", None)
        assert isinstance(out_features, int) and out_features > 0, f"{sensor.name}: cortex lacks int out_features"
        with torch.no_grad():
            out = module(net.flatten(0, 1))
        assert tuple(out.shape) == (6, out_features), (
            f"{sensor.name}: cortex output {tuple(out.shape)} != (6, {out_features})"
        )
        assert torch.isfinite(out).all(), f"{sensor.name}: cortex output is not finite"
    else:
        assert isinstance(sensor.channels, int) and sensor.channels > 0, (
            f"{sensor.name}: joins {sensor.joins!r} but has no channels"
        )
    return sensor
