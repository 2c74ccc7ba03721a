"""Tests for golem-losses: the contract, hand-computed values, identities, stability, plugins."""

from __future__ import annotations

import math

import pytest
import torch

from golem.errors import GolemError
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem.testing.losses import assert_loss_contract
from golem_losses.asymmetric import AsymmetricLoss, build_asymmetric
from golem_losses.bce import BCELoss, build_bce
from golem_losses.focal import FocalLoss, build_focal
from golem_losses.smooth import SmoothBCELoss, build_smooth

BUILDERS = {"bce": build_bce, "focal": build_focal, "asymmetric": build_asymmetric, "smooth": build_smooth}


def settings(**loss) -> GolemSettings:
    return GolemSettings.model_validate({"loss": loss})


def sig(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def t(values) -> torch.Tensor:
    """A [1, 1, A] float64 tensor: one batch row, one step."""
    return torch.tensor([[values]], dtype=torch.float64)


# --- the contract -----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_contract_default_settings(name):
    assert_loss_contract(BUILDERS[name])


@pytest.mark.parametrize(
    ("name", "loss"),
    [
        ("focal", {"focal": {"alpha": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "gamma": 0.5}}),
        ("focal", {"focal": {"alpha": 0.5, "gamma": 0.0}}),
        ("asymmetric", {"asymmetric": {"gamma_neg": 0.5, "gamma_pos": 0.0, "clip": 0.2}}),
        ("asymmetric", {"asymmetric": {"gamma_neg": 0.0, "gamma_pos": 0.0, "clip": 0.0}}),
        ("smooth", {"smooth": {"epsilon": 0.0}}),
    ],
)
def test_contract_other_settings(name, loss):
    assert_loss_contract(BUILDERS[name], settings(**loss))


def test_contract_catches_a_sum_reduced_loss():
    class SumBCE(torch.nn.Module):
        def forward(self, logits, targets):
            return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="sum")

    with pytest.raises(AssertionError, match="not a mean"):
        assert_loss_contract(lambda s, n: SumBCE())


def test_contract_catches_an_unstable_loss():
    class NaiveBCE(torch.nn.Module):
        def forward(self, logits, targets):
            p = torch.sigmoid(logits)
            return -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p)).mean()

    with pytest.raises(AssertionError, match="100"):
        assert_loss_contract(lambda s, n: NaiveBCE())


# --- hand-computed values ---------------------------------------------------


def test_bce_by_hand():
    # z = [0, 2, -1], y = [1, 0, 0]: −log σ(0), −log(1 − σ(2)), −log(1 − σ(−1))
    expected = (math.log(2.0) + math.log1p(math.exp(2.0)) + math.log1p(math.exp(-1.0))) / 3.0
    assert expected == pytest.approx(1.0444457, abs=1e-6)
    got = BCELoss()(t([0.0, 2.0, -1.0]), t([1.0, 0.0, 0.0]))
    assert float(got) == pytest.approx(expected, rel=1e-12)


def test_focal_by_hand_scalar_alpha():
    # α = 0.25, γ = 2, z = [1, −0.5], y = [1, 0]
    p1, p2 = sig(1.0), sig(-0.5)
    pos = 0.25 * (1 - p1) ** 2 * -math.log(p1)
    neg = 0.75 * p2**2 * -math.log(1 - p2)
    expected = (pos + neg) / 2.0
    assert expected == pytest.approx(0.0281731, abs=1e-6)
    got = FocalLoss(alpha=0.25, gamma=2.0)(t([1.0, -0.5]), t([1.0, 0.0]))
    assert float(got) == pytest.approx(expected, rel=1e-6)


def test_focal_by_hand_alpha_vector():
    # per-action α = [0.9, 0.1, 0.6], γ = 1, z = [−1, 1, 0.5], y = [1, 1, 0]
    p = [sig(-1.0), sig(1.0), sig(0.5)]
    terms = [
        0.9 * (1 - p[0]) * -math.log(p[0]),
        0.1 * (1 - p[1]) * -math.log(p[1]),
        0.4 * p[2] * -math.log(1 - p[2]),
    ]
    focal = build_focal(settings(focal={"alpha": [0.9, 0.1, 0.6], "gamma": 1.0}), 3)
    got = focal(t([-1.0, 1.0, 0.5]), t([1.0, 1.0, 0.0]))
    assert float(got) == pytest.approx(sum(terms) / 3.0, rel=1e-6)


def test_asymmetric_by_hand():
    # γ+ = 1, γ− = 2, clip m = 0.05; z = [0.5, 0, −3], y = [1, 0, 0]
    p_pos = sig(0.5)
    pos = (1 - p_pos) * -math.log(p_pos)
    p_m = sig(0.0) - 0.05  # 0.45
    neg = p_m**2 * -math.log(1 - p_m)
    assert sig(-3.0) < 0.05  # the third element is an easy negative under the margin: it costs 0
    expected = (pos + neg + 0.0) / 3.0
    got = AsymmetricLoss(gamma_neg=2.0, gamma_pos=1.0, clip=0.05)(t([0.5, 0.0, -3.0]), t([1.0, 0.0, 0.0]))
    assert float(got) == pytest.approx(expected, rel=1e-6)


def test_smooth_by_hand():
    # ε = 0.2: y = 1 → 0.9, y = 0 → 0.1; z = [1, −2]
    p1, p2 = sig(1.0), sig(-2.0)
    first = -(0.9 * math.log(p1) + 0.1 * math.log(1 - p1))
    second = -(0.1 * math.log(p2) + 0.9 * math.log(1 - p2))
    got = SmoothBCELoss(epsilon=0.2)(t([1.0, -2.0]), t([1.0, 0.0]))
    assert float(got) == pytest.approx((first + second) / 2.0, rel=1e-6)


# --- identities -------------------------------------------------------------


@pytest.fixture
def batch():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(4, 6, 8, generator=gen, dtype=torch.float64) * 3
    targets = (torch.rand(4, 6, 8, generator=gen) < 0.4).double()
    return logits, targets


def test_bce_matches_torch(batch):
    logits, targets = batch
    ref = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
    assert torch.allclose(BCELoss()(logits, targets), ref)


def test_focal_gamma0_alpha_half_is_half_bce(batch):
    logits, targets = batch
    focal = build_focal(settings(focal={"alpha": 0.5, "gamma": 0.0}), 8)
    assert torch.allclose(focal(logits, targets), 0.5 * BCELoss()(logits, targets), rtol=1e-12)


def test_asymmetric_without_focusing_or_margin_is_bce(batch):
    logits, targets = batch
    asl = build_asymmetric(settings(asymmetric={"gamma_neg": 0.0, "gamma_pos": 0.0, "clip": 0.0}), 8)
    assert torch.allclose(asl(logits, targets), BCELoss()(logits, targets), rtol=1e-12)


def test_smooth_epsilon0_is_bce(batch):
    logits, targets = batch
    smooth = build_smooth(settings(smooth={"epsilon": 0.0}), 8)
    assert torch.allclose(smooth(logits, targets), BCELoss()(logits, targets), rtol=1e-12)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="differ in shape"):
        BCELoss()(torch.zeros(2, 3, 4), torch.zeros(2, 3, 5))


# --- stability at ±100 ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_stable_at_100(name):
    loss = BUILDERS[name](GolemSettings(), 4)
    logits = torch.tensor([[[100.0, -100.0, 100.0, -100.0]]], requires_grad=True)
    targets = torch.tensor([[[1.0, 0.0, 0.0, 1.0]]])  # two right, two wrong
    value = loss(logits, targets)
    value.backward()
    assert torch.isfinite(value) and value > 0
    assert torch.isfinite(logits.grad).all()
    assert logits.grad[0, 0, 3] < 0  # the wrong positive is pushed up
    if name == "asymmetric":
        # ASL bounds a wrong negative's cost by −log(clip): its gradient at z = 100 is ~e^−100, i.e. 0
        assert logits.grad[0, 0, 2] >= 0
    else:
        assert logits.grad[0, 0, 2] > 0  # the wrong negative is pushed down


def test_bce_wrong_at_100_costs_100():
    # −log σ(−100) = log(1 + e^100) = 100 + log(1 + e^−100) ≈ 100
    got = BCELoss()(torch.tensor([[[100.0, -100.0]]]), torch.tensor([[[0.0, 1.0]]]))
    assert float(got) == pytest.approx(100.0, rel=1e-6)


# --- settings errors --------------------------------------------------------


def test_focal_alpha_length_mismatch_names_key_and_lengths():
    with pytest.raises(GolemError) as info:
        build_focal(settings(focal={"alpha": [0.25, 0.5, 0.75]}), 8)
    message = str(info.value)
    assert "loss.focal.alpha" in message and "3" in message and "n_actions=8" in message
    assert "\n" not in message


# --- plugins ----------------------------------------------------------------


def test_entry_points_register_losses():
    host = load_plugins()
    assert {"bce", "focal", "asymmetric", "smooth"} <= set(host.registry.names("losses"))
    for name, builder in BUILDERS.items():
        comp = host.registry.get("losses", name)
        assert comp.obj is builder
        assert comp.owner.distribution == "golem-losses"
        assert comp.owner.plugin == name
    loaded = {p.name: p for p in host.plugins}
    for name in BUILDERS:
        assert not loaded[name].broken, loaded[name].error
        assert loaded[name].components == {"losses": [name]}
