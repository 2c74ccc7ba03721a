"""The policy and its value head over segments: the cloned logits, exact KL 0 at the start, the model check."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from golem.errors import GolemError
from golem_rl import bernoulli
from golem_rl.value import ValueHead, check_model, policy_and_value


def segment(model, rows=2, steps=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = {"cam": torch.rand(rows, steps, 3, 8, 8, generator=g)}
    starts = torch.zeros(rows, steps, dtype=torch.bool)
    starts[:, 0] = True
    starts[1, 3] = True
    spans = torch.ones(rows, steps)
    return inputs, model.initial_state(rows), starts, spans


def test_logits_are_the_models_and_values_start_at_zero(model):
    inputs, hx, starts, spans = segment(model)
    head = ValueHead(check_model(model, "tiny"))
    logits, values, _ = policy_and_value(model, head, inputs, hx, starts, spans)
    whole, _ = model(inputs, hx)  # no reset inside until step 3 of row 1
    torch.testing.assert_close(logits[0], whole[0])
    torch.testing.assert_close(logits[1, :3], whole[1, :3])
    assert values.shape == (2, 5) and not values.any()


def test_kl_to_a_copy_is_exactly_zero_when_both_record_gradients(model):
    inputs, hx, starts, spans = segment(model)
    reference = copy.deepcopy(model)
    head = ValueHead(check_model(model, "tiny"))
    logits, _, _ = policy_and_value(model, head, inputs, hx, starts, spans)
    anchor, _, _ = policy_and_value(reference, None, inputs, hx, starts, spans)
    assert (bernoulli.kl(logits, anchor.detach()) == 0).all()


def test_warm_up_keeps_the_value_gradient_out_of_the_policy(model):
    inputs, hx, starts, spans = segment(model)
    head = ValueHead(check_model(model, "tiny"))
    _, values, _ = policy_and_value(model, head, inputs, hx, starts, spans, detach_value=True)
    (values - 1.0).pow(2).mean().backward()
    assert all(p.grad is None for p in model.parameters())
    assert head.linear.weight.grad is not None


def test_a_model_without_features_cannot_be_fine_tuned():
    with pytest.raises(GolemError, match="cannot be fine-tuned"):
        check_model(nn.Linear(3, 3), "odd")


def test_a_centred_head_presses_where_the_source_plays(model):
    """After centring, a button's sampled probability passes 0.5 exactly where the source's passed its threshold."""
    from golem_rl.value import centre_head

    inputs, hx, starts, spans = segment(model, rows=4, steps=6, seed=3)
    before, _, _ = policy_and_value(model, None, inputs, hx, starts, spans)
    width = before.shape[-1]
    tau = [0.2 + 0.6 * i / max(1, width - 1) for i in range(width)]
    centred = copy.deepcopy(model)
    centre_head(centred, tau)
    after, _, _ = policy_and_value(centred, None, inputs, hx, starts, spans)
    torch.testing.assert_close(torch.sigmoid(after), torch.sigmoid(before - torch.logit(torch.tensor(tau))))
    assert torch.equal(torch.sigmoid(after) > 0.5, torch.sigmoid(before) > torch.tensor(tau))
    with pytest.raises(GolemError, match="one press threshold in"):
        centre_head(copy.deepcopy(model), [0.5] * (width + 1))
    with pytest.raises(GolemError, match="one press threshold in"):
        centre_head(copy.deepcopy(model), 1.0)


def test_a_sharpened_head_keeps_its_mode_and_moves_away_from_a_half(model):
    from golem_rl.value import sharpen_head

    inputs, hx, starts, spans = segment(model, rows=3, steps=4, seed=5)
    before, _, _ = policy_and_value(model, None, inputs, hx, starts, spans)
    sharp = copy.deepcopy(model)
    sharpen_head(sharp, 4.0)
    after, _, _ = policy_and_value(sharp, None, inputs, hx, starts, spans)
    torch.testing.assert_close(after, 4.0 * before)
    p, q = torch.sigmoid(before), torch.sigmoid(after)
    assert torch.equal(p > 0.5, q > 0.5) and bool(((q - 0.5).abs() >= (p - 0.5).abs()).all())
