"""The audio sensor: contract, plugin registration, mirror rule and real engine sound."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from golem.settings import GolemSettings
from golem.testing.sensors import assert_sensor_contract
from golem_sensors_audio import AudioSensor, register_sensors


def test_registers_itself():
    seen = {}
    register_sensors(lambda name, cls: seen.setdefault(name, cls))
    assert seen == {"audio": AudioSensor}


def test_contract_without_engine():
    assert_sensor_contract(AudioSensor, engine=False)


def test_shape_follows_sample_rate_and_mirror_swaps_channels():
    settings = GolemSettings(brain={"dsp": {"sample_rate": 11025}})
    sensor = AudioSensor(settings)
    assert sensor.shape == (2, 1260)
    x = np.stack([np.zeros(1260), np.arange(1260)]).astype(np.float16)[None]
    assert np.array_equal(sensor.mirror(x)[0, 0], x[0, 1])  # channels swapped, time kept


def test_cortex_runs_mel_inside_the_network():
    settings = GolemSettings()
    cortex = AudioSensor(settings).cortex()
    names = {type(m).__name__ for m in cortex.modules()}
    assert {"MelSpectrogram", "AmplitudeToDB"} <= names
    out = cortex(torch.zeros(2, 2, 2520))  # silence stays finite
    assert out.shape == (2, cortex.out_features) and torch.isfinite(out).all()


@pytest.mark.engine
def test_contract_and_shooting_is_heard():
    from golem.runtime.session import Session

    sensor = assert_sensor_contract(AudioSensor, tics=2)
    with Session(GolemSettings(), [sensor], scenario="basic") as session:
        assert "+snd_efx 0" in session.game.get_game_args()
        raw_peak, steps = 0, []
        for _ in range(12):
            session.act([0] * 6 + [1, 0])  # ATTACK: the pistol fires
            raw_peak = max(raw_peak, int(np.abs(session.game.get_state().audio_buffer).max()))
            steps.append(session.observe()["audios"])
    assert raw_peak > 1000, "the engine produced no sound: is OpenAL working and +snd_efx 0 set?"
    loud = [s for s in steps if s.any()]
    assert loud, "normalised steps are all silent"
    step = loud[-1].astype(np.float32)
    assert step.shape == (2, 2520) and loud[-1].dtype == np.float16
    assert abs(step.mean()) < 1e-2 and abs(step.std() - 1.0) < 1e-2
