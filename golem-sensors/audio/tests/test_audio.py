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


def test_legacy_audio_in_the_stored_layout_is_kept_bit_for_bit_and_bad_widths_are_one_line():
    from golem.errors import GolemError

    rng = np.random.default_rng(0)
    stored = rng.standard_normal((5, 2, 2520)).astype(np.float16)  # 4 tics at 22050 Hz, as Golem exports
    kept = AudioSensor.from_legacy("x.npz", stored, GolemSettings(), {"sample_rate": 22050})
    assert kept.dtype == np.float16 and np.array_equal(kept, stored)
    with pytest.raises(GolemError) as err:  # 1000 samples are no whole number of tics at 44100 Hz
        AudioSensor.from_legacy("odd.npz", rng.standard_normal((5, 2, 1000)).astype(np.float32))
    assert "\n" not in str(err.value) and "brain.dsp.legacy_sample_rate" in str(err.value)


@pytest.mark.engine
def test_seed_layout_audio_becomes_what_the_sensor_records():
    """The seed's 1 tic at 44,100 Hz per step → the sensor's 4-tic windows, at the same rate and resampled."""
    import torchaudio.functional as AF

    from golem.runtime.session import Session
    from golem_sensors_audio.sensor import normalise

    settings = GolemSettings(brain={"dsp": {"sample_rate": 44100}})
    sensor = AudioSensor(settings)
    raws, recorded = [], []
    with Session(settings, [sensor], scenario="basic") as session:
        for i in range(16):
            session.act([0] * 6 + [1, 0] if i % 6 == 0 else [0] * 8)  # ATTACK every 6th tic
            raws.append(session.game.get_state().audio_buffer.copy())  # [5040, 2] int16, the last 4 tics
            recorded.append(session.observe()["audios"])
    raws_a, recorded_a = np.stack(raws), np.stack(recorded)
    assert np.abs(raws_a).max() > 1000, "no sound: is OpenAL working?"
    legacy = raws_a[:, -1260:, :].transpose(0, 2, 1).astype(np.float32)  # the seed's layout: this tic only
    same_rate = AudioSensor.from_legacy("seed.npz", legacy, settings)
    assert same_rate.shape == recorded_a.shape == (16, 2, 5040)
    # from the 4th step on, the window is all in the episode: bit for bit what the sensor recorded
    np.testing.assert_array_equal(same_rate[3:], recorded_a[3:])
    # at the default 22050 Hz: the resampled windows, as the sensor would record them at that rate
    default = AudioSensor.from_legacy("seed.npz", legacy, GolemSettings())
    assert default.shape == (16, 2, 2520) and default.dtype == np.float16
    for t in range(4, 16):
        signal = np.concatenate([raws_a[0].T.astype(np.float32), *legacy[1 : t + 1]], axis=-1)
        want = normalise(AF.resample(torch.from_numpy(signal), 44100, 22050).numpy()[:, -2520:].T).astype(np.float32)
        got = default[t].astype(np.float32)
        if want.any():
            assert np.corrcoef(want.ravel(), got.ravel())[0, 1] > 0.999
