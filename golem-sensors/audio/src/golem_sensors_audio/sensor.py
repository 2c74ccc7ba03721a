"""Audio: the engine's stereo buffer, normalised per step; a Mel-spectrogram conv cortex."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from golem.sensors import Sensor
from golem.settings import ComponentSettings, section

TICRATE = 35
#: Tics of audio in each step's buffer (a sliding window ending at the current tic).
BUFFER_TICS = 4
#: Standard deviations below this are silence: stored as zeros.
SILENCE_STD = 1e-3
FEATURES = 128


def samples_per_step(sample_rate: int, buffer_tics: int = BUFFER_TICS) -> int:
    """Audio samples per channel in one step: ``buffer_tics × sample_rate / 35``."""
    return buffer_tics * sample_rate // TICRATE


def normalise(buffer: np.ndarray, dtype: np.dtype[Any] = np.dtype(np.float16)) -> np.ndarray:
    """Interleaved samples ``[N, 2]`` → ``[2, N]`` scaled to zero mean, unit variance over the step (silence → zeros).

    The same bits as ``w = buffer.T.astype(np.float32); ((w - w.mean()) / float(w.std())).astype(dtype)``:
    the same float32 sums over the same memory order, each divided by the count
    in float64 and rounded to float32 as numpy's ``mean``/``var`` do, but one
    subtraction serves both the variance and the result, the division writes
    the channels apart, and the float16 cast (numpy's is scalar code) runs
    vectorised in torch (both round to nearest even). The result is C-contiguous.
    """
    flat = np.ascontiguousarray(buffer).astype(np.float32).reshape(-1)  # [2N]: L R L R …
    mean = np.float32(float(np.add.reduce(flat)) / flat.size)
    centred = np.subtract(flat, mean, out=flat)
    std = float(np.sqrt(np.float32(float(np.add.reduce(centred * centred)) / flat.size)))
    if std < SILENCE_STD:
        return np.zeros(buffer.shape[::-1], dtype=dtype)
    scaled = np.empty(buffer.shape[::-1], dtype=np.float32)  # [2, N]
    np.divide(centred.reshape(buffer.shape).T, std, out=scaled)
    return _cast(scaled, dtype)


def _cast(x: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """``x.astype(dtype)``; float32 → float16 through torch's vectorised conversion (same rounding)."""
    if x.dtype == np.float32 and dtype == np.float16:
        import torch

        return torch.from_numpy(x).to(torch.float16).numpy()
    return x.astype(dtype)


def restitch(steps: np.ndarray, rate: int, tics: int, target: int) -> np.ndarray:
    """Per-step buffers of ``tics`` tics at ``rate`` Hz → per-step windows of the last 4 tics at ``target`` Hz.

    Args:
        steps: float32 ``[T, 2, tics · rate / 35]``; step ``t + 1`` is one tic after step ``t``.

    Returns:
        float16 ``[T, 2, 4 · target / 35]``, each step normalised by :func:`normalise` (silence → zeros).
    """
    import torch
    import torchaudio.functional as AF

    per_tic, new_tic = rate // TICRATE, target // TICRATE
    T = steps.shape[0]
    signal = np.concatenate([steps[0], *steps[1:, :, -per_tic:]], axis=-1) if T > 1 else steps[0]
    if rate != target:
        signal = AF.resample(torch.from_numpy(np.ascontiguousarray(signal)), rate, target).numpy()
    width = BUFFER_TICS * new_tic
    padded = np.concatenate([np.zeros((2, width), dtype=np.float32), signal.astype(np.float32)], axis=-1)
    out = np.empty((T, 2, width), dtype=np.float16)
    for t in range(T):
        end = width + (tics + t) * new_tic  # step t ends after its tic, tics + t tics into the signal
        out[t] = normalise(padded[:, end - width : end].T)
    return out


class DSPSettings(ComponentSettings):
    """``brain.dsp``: the audio front end, the Mel spectrogram computed inside the network."""

    key = "brain.dsp"
    sample_rate: Literal[11025, 22050, 44100] = Field(22050, description="engine audio sampling rate, Hz")
    n_fft: int = Field(512, ge=16, le=8192, description="STFT window, samples")
    hop_length: int = Field(128, ge=1, le=8192, description="STFT hop, samples")
    n_mels: int = Field(32, ge=4, le=256, description="Mel bands")
    legacy_sample_rate: Literal[11025, 22050, 44100] = Field(
        44100,
        description="sample rate of 'audios' in imported .npz files that do not record theirs "
        "(the seed's recorder: 44100 Hz, one tic per step)",
    )


class AudioSensor(Sensor):
    """Stereo engine audio (``brain.dsp.sample_rate`` Hz, the last 4 tics).

    Stored float16 ``[2, N]`` (channel, sample), ``N = 4 × sample_rate / 35``
    (2520 at 22050 Hz), scaled at extraction to zero mean and unit variance over
    the whole step (silence → zeros). Mirror swaps left/right channels (axis -2).
    The cortex computes the Mel spectrogram (dB) inside the network.
    """

    name = "audio"
    key = "audios"
    dtype = np.dtype(np.float16)
    step_shape = (2, None)

    @classmethod
    def from_legacy(
        cls, source: str, array: np.ndarray, settings: Any = None, recorded: dict[str, Any] | None = None
    ) -> np.ndarray:
        """Seed-layout ``[T, 2, N]`` or ``[T, N, 2]`` float → float16 ``[T, 2, N']`` as this sensor records it.

        The file's sample rate is the one its ``meta`` recorded (files Golem
        exported), else ``brain.dsp.legacy_sample_rate`` (the seed's recorder:
        44,100 Hz with one tic per step, ``N = 1260``). When that rate and the
        ``N / (rate / 35)`` tics per step already match ``brain.dsp.sample_rate``
        and the 4 tics the sensor records, the samples are kept as they are
        (export → import is bit for bit). Otherwise, taking each step to advance
        one tic: the steps are stitched into one continuous signal (the first
        step's buffer, then each later step's newest tic), resampled to
        ``brain.dsp.sample_rate`` (``torchaudio.functional.resample``), cut again
        into windows of the last 4 tics ending at each step (silence before the
        first tic) and normalised per step as the sensor normalises its buffer.

        Raises:
            GolemError: wrong layout or dtype, or ``N`` is not a whole number of tics at the file's rate.
        """
        import structlog

        from golem.errors import GolemError

        if array.ndim != 3 or 2 not in array.shape[1:]:
            raise GolemError(f"{source}: 'audios' must be [T, 2, N] or [T, N, 2], got {list(array.shape)}")
        if array.dtype.kind != "f":
            raise GolemError(f"{source}: 'audios' must be float, got {array.dtype}")
        if array.shape[1] != 2:
            array = array.transpose(0, 2, 1)
        dsp = section(settings, DSPSettings)
        rate = int((recorded or {}).get("sample_rate") or dsp.legacy_sample_rate)
        target = int(dsp.sample_rate)
        per_tic, n = rate // TICRATE, int(array.shape[2])
        if rate % TICRATE or n % per_tic or n == 0:
            raise GolemError(
                f"{source}: 'audios' holds {n} samples per step, not a whole number of tics at {rate} Hz "
                f"({per_tic} samples a tic); set brain.dsp.legacy_sample_rate to the rate it was recorded at"
            )
        tics = n // per_tic
        if rate == target and tics == BUFFER_TICS:
            return np.ascontiguousarray(array.astype(np.float16))
        out = restitch(array.astype(np.float32), rate, tics, target)
        structlog.get_logger(__name__).warning(
            "legacy_audio_converted",
            file=source,
            found=f"{tics} tic(s) at {rate} Hz [2, {n}]",
            stored=f"{BUFFER_TICS} tics at {target} Hz [2, {out.shape[2]}]",
        )
        return out

    settings_model = DSPSettings

    @property
    def dsp(self) -> DSPSettings:
        """This sensor's ``brain.dsp`` section."""
        return section(self.settings, DSPSettings)

    @property
    def shape(self) -> tuple[int, ...]:
        return (2, samples_per_step(self.dsp.sample_rate))

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        game.set_audio_buffer_enabled(True)
        game.set_audio_sampling_rate(getattr(vzd.SamplingRate, f"SR_{self.dsp.sample_rate}"))
        game.set_audio_buffer_size(BUFFER_TICS)

    def _read(self, state: Any) -> np.ndarray | None:
        buffer = state.audio_buffer  # [N, 2] int16
        if buffer is None or buffer.ndim != 2 or buffer.shape[::-1] != self.shape:
            return None
        return normalise(buffer, self.dtype)

    def mirror(self, x: np.ndarray) -> np.ndarray:
        """Swap the stereo channels of ``x[..., 2, N]`` (time is not reversed)."""
        return x[..., ::-1, :]

    def to_network(self, x):
        """float16 ``[B, T, 2, N]`` → float32."""
        return x.float()

    def cortex(self, extra_channels: int = 0):
        """``[N, 2 + extra_channels, samples]`` → ``[N, 128]`` via Mel spectrogram (dB) and a 2-D conv stack."""
        from golem_sensors_audio.cortex import AudioCortex

        dsp = self.dsp
        return AudioCortex(
            2 + extra_channels,
            sample_rate=dsp.sample_rate,
            n_fft=dsp.n_fft,
            hop_length=dsp.hop_length,
            n_mels=dsp.n_mels,
        )
