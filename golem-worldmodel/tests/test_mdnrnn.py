"""MDN-RNN: shapes, temperature semantics, label alignment of the training batches."""

from __future__ import annotations

import math

import numpy as np
import torch

from golem_worldmodel.mdnrnn import mdn_nll, rnn_loss, sample_next
from golem_worldmodel.training import make_batch, sequence_windows
from golem_worldmodel.vae import ConvVAE, vae_loss


def test_shapes(rnn):
    B, T, Z = 4, 7, rnn.z_dim
    heads, (h, c) = rnn(torch.randn(B, T, Z), torch.randint(0, 3, (B, T)))
    assert heads["logit_pi"].shape == (B, T, Z, rnn.gaussians) == heads["mu"].shape == heads["log_sigma"].shape
    assert heads["reward"].shape == (B, T) == heads["done_logit"].shape
    assert h.shape == (1, B, rnn.hidden)
    step, _ = rnn.step(torch.randn(B, Z), torch.zeros(B, dtype=torch.long), rnn.initial_state(B))
    assert step["mu"].shape == (B, Z, rnn.gaussians)
    assert sample_next(step).shape == (B, Z)
    assert mdn_nll(heads, torch.randn(B, T, Z)).shape == (B, T, Z)


def test_vae_shapes():
    vae = ConvVAE(8, (4, 8, 8, 16))
    x = torch.rand(2, 3, 64, 64)
    recon, mu, logvar = vae(x)
    assert recon.shape == x.shape and mu.shape == (2, 8) == logvar.shape
    total, rec, kl = vae_loss(x, recon, mu, logvar, kl_tolerance=0.5)
    assert total.item() >= rec.item() + 0.5 * 8 - 1e-4  # KL clamped below at tolerance · z_dim


def _heads(logits, mus, sigmas, B=20000):
    """Step heads for one latent dim with the given components, repeated B times."""
    t = lambda v: torch.tensor(v, dtype=torch.float32).expand(B, 1, len(v)).clone()  # noqa: E731
    return {"logit_pi": t(logits), "mu": t(mus), "log_sigma": t([math.log(s) for s in sigmas])}


def test_temperature_scales_std_by_sqrt_tau():
    g = torch.Generator().manual_seed(0)
    for tau in (0.25, 1.0, 2.0):
        z = sample_next(_heads([0.0], [1.5], [0.5]), tau, g)
        assert abs(float(z.mean()) - 1.5) < 0.02
        assert abs(float(z.std()) - 0.5 * math.sqrt(tau)) < 0.02 * math.sqrt(tau) + 0.005


def test_temperature_divides_mixture_logits():
    """Components far apart; the share picking component 1 is softmax(logits / tau)[1]."""
    g = torch.Generator().manual_seed(1)
    logits = [0.0, math.log(3.0)]
    for tau, want in ((1.0, 0.75), (0.5, 0.9), (2.0, math.sqrt(3) / (1 + math.sqrt(3)))):
        z = sample_next(_heads(logits, [-10.0, 10.0], [0.1, 0.1]), tau, g)
        assert abs(float((z > 0).float().mean()) - want) < 0.015, tau
    z = sample_next(_heads(logits, [-10.0, 10.0], [0.1, 0.1], B=100), 1e-4, g)
    assert torch.allclose(z, torch.full_like(z, 10.0), atol=0.01)  # tau → 0: the most likely mean


def test_batch_labels_are_aligned(latents):
    """Input t is (z_t, a_t); its targets are z_{t+1}, rewards[t], done[t]; the last step has no z target."""
    latents.mu[:] = np.arange(len(latents.mu))[:, None]  # mu of row n is n: z identifies the frame
    latents.logvar[:] = -30.0  # sampling ~ the mean
    latents.rewards[:] = np.arange(len(latents.rewards))
    L = 8
    windows = sequence_windows(latents, L)
    assert len(windows) == sum(-(-int(T) // L) for T in latents.lengths())
    b = make_batch(latents, windows, L, np.random.default_rng(0))
    for i, (e, s) in enumerate(windows):
        off, T = int(latents.offsets[e]), int(latents.lengths()[e])
        n = min(L, T - s)
        for t in range(n):
            row = off + s + t
            assert abs(float(b["z"][i, t, 0]) - row) < 1e-3
            assert b["actions"][i, t] == latents.actions[row]
            assert b["reward"][i, t] == row
            assert b["done"][i, t] == (1.0 if s + t == T - 1 else 0.0)
            has_next = s + t + 1 < T
            assert b["next_mask"][i, t] == float(has_next)
            if has_next:
                assert abs(float(b["z_next"][i, t, 0]) - (row + 1)) < 1e-3
        assert b["step_mask"][i, :n].all() and not b["step_mask"][i, n:].any()


def test_posterior_sampling_in_batches(latents):
    latents.logvar[:] = 0.0
    b1 = make_batch(latents, sequence_windows(latents, 8)[:2], 8, np.random.default_rng(0))
    b2 = make_batch(latents, sequence_windows(latents, 8)[:2], 8, np.random.default_rng(1))
    assert not torch.allclose(b1["z"], b2["z"])  # latents are sampled, not the means


def test_done_loss_is_upweighted(rnn):
    B, T, Z = 2, 5, rnn.z_dim
    heads, _ = rnn(torch.randn(B, T, Z), torch.zeros(B, T, dtype=torch.long))
    done = torch.zeros(B, T)
    done[:, -1] = 1
    ones = torch.ones(B, T)
    l1 = rnn_loss(heads, torch.randn(B, T, Z), ones, ones, done, ones, done_pos_weight=1.0)["done"]
    l10 = rnn_loss(heads, torch.randn(B, T, Z), ones, ones, done, ones, done_pos_weight=10.0)["done"]
    assert l10.item() > l1.item()
