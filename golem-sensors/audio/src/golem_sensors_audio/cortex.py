"""The auditory cortex: waveform → Mel spectrogram (dB) → 2-D convolutions → features, all on the model's device."""

from __future__ import annotations

import torch
import torchaudio
from torch import nn


class AudioCortex(nn.Module):
    """``[N, C, samples]`` float waveform → ``[N, out_features]``.

    Mel spectrogram ``[N, C, n_mels, 1 + samples // hop_length]`` in dB (÷20,
    top 80 dB kept), then 2 × (conv 3×3 stride 2 + ReLU), adaptive average
    pooling to 4×4, Linear + ReLU.
    """

    def __init__(
        self, in_channels: int, *, sample_rate: int, n_fft: int, hop_length: int, n_mels: int, features: int = 128
    ) -> None:
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=sample_rate, n_fft=n_fft, hop_length=hop_length, n_mels=n_mels
        )
        self.db = torchaudio.transforms.AmplitudeToDB(stype="power", top_db=80.0)
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d((4, 4)),
            nn.Flatten(),
            nn.Linear(32 * 16, features),
            nn.ReLU(),
        )
        self.out_features = features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spec = self.db(self.mel(x.float())) / 20.0
        return self.conv(spec)
