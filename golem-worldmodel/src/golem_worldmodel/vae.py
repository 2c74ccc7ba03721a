"""The convolutional VAE (World Models' V): a 64×64 RGB frame ↔ a latent ``z``.

Encoder: four 4×4 stride-2 convolutions (ReLU) → ``mu``, ``logvar`` of size
``z_dim``. Decoder: Linear → four transposed convolutions (5, 5, 6, 6) →
sigmoid. With the paper's channels ``(32, 64, 128, 256)`` this is exactly the
architecture of Ha & Schmidhuber (2018).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn


class ConvVAE(nn.Module):
    """VAE over ``[N, 3, 64, 64]`` frames in ``[0, 1]``.

    Args:
        z_dim: latent size.
        channels: the four encoder conv widths (the decoder mirrors them).
    """

    def __init__(self, z_dim: int = 64, channels: Sequence[int] = (32, 64, 128, 256)) -> None:
        super().__init__()
        c1, c2, c3, c4 = (int(c) for c in channels)
        self.z_dim = int(z_dim)
        self.channels = (c1, c2, c3, c4)
        self.encoder = nn.Sequential(
            nn.Conv2d(3, c1, 4, 2),
            nn.ReLU(),
            nn.Conv2d(c1, c2, 4, 2),
            nn.ReLU(),
            nn.Conv2d(c2, c3, 4, 2),
            nn.ReLU(),
            nn.Conv2d(c3, c4, 4, 2),
            nn.ReLU(),
            nn.Flatten(),
        )
        flat = c4 * 2 * 2
        self.mu = nn.Linear(flat, self.z_dim)
        self.logvar = nn.Linear(flat, self.z_dim)
        self.expand = nn.Linear(self.z_dim, 4 * c4)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(4 * c4, c3, 5, 2),
            nn.ReLU(),
            nn.ConvTranspose2d(c3, c2, 5, 2),
            nn.ReLU(),
            nn.ConvTranspose2d(c2, c1, 6, 2),
            nn.ReLU(),
            nn.ConvTranspose2d(c1, 3, 6, 2),
            nn.Sigmoid(),
        )

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [N, 3, 64, 64]`` in [0, 1] → ``(mu [N, z], logvar [N, z])``."""
        h = self.encoder(x)
        return self.mu(h), self.logvar(h)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """``z [N, z]`` → frames ``[N, 3, 64, 64]`` in [0, 1]."""
        return self.decoder(self.expand(z)[:, :, None, None])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``x [N, 3, 64, 64]`` → ``(reconstruction, mu, logvar)`` with ``z`` sampled by reparameterisation."""
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar


def frames_to_input(frames: torch.Tensor) -> torch.Tensor:
    """uint8 ``[N, 3, 64, 64]`` → float32 in [0, 1]."""
    return frames.float().div_(255.0)


def vae_loss(
    x: torch.Tensor, recon: torch.Tensor, mu: torch.Tensor, logvar: torch.Tensor, kl_tolerance: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """World Models' loss: summed squared error per frame + KL clamped below at ``kl_tolerance · z_dim`` nats.

    Returns ``(total, reconstruction, kl)``, each averaged over the batch.
    """
    rec = F.mse_loss(recon, x, reduction="none").flatten(1).sum(1).mean()
    kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean()
    kl_clamped = torch.clamp(kl, min=kl_tolerance * mu.shape[1])
    return rec + kl_clamped, rec, kl
