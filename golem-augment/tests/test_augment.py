"""golem-augment: each augmentation's draw per window, what it reaches, its settings, selection, and the contract."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from golem.augment import augment_inputs, batch_generator, build_augmentations
from golem.builtin.visual import VisualSensor
from golem.errors import SettingsError
from golem.plugins import load_plugins
from golem.settings import GolemSettings, load_settings
from golem.testing import assert_augmentation_contract, assert_plugin_registers
from golem_augment import Colour, Cutout, RandomConv, Shift, colour, conv, cutout, shift
from golem_augment.colour import colour_matrices
from golem_cli.app import build_app

B, T, H, W = 8, 5, 64, 64
AUGMENTATIONS = {"shift": Shift, "colour": Colour, "cutout": Cutout, "conv": RandomConv}
MODULES = {"shift": shift, "colour": colour, "cutout": cutout, "conv": conv}


def settings(**augment) -> GolemSettings:
    return GolemSettings.model_validate({"augment": augment})


def frames(channels: int = 3, seed: int = 0, batch: int = B, steps: int = T) -> torch.Tensor:
    """Random images ``[batch, steps, channels, H, W]`` in ``[0, 1]``, a different frame at every step."""
    return torch.rand(batch, steps, channels, H, W, generator=torch.Generator().manual_seed(seed))


def still(channels: int = 3, seed: int = 0) -> torch.Tensor:
    """Windows whose frames are identical at every step."""
    return frames(channels, seed, steps=1).expand(-1, T, -1, -1, -1).contiguous()


def run(aug, images: torch.Tensor, seed: int = 0) -> torch.Tensor:
    return aug(images, batch_generator(seed, 0, 0))


# --- every augmentation ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(AUGMENTATIONS))
def test_registered_by_its_entry_point_module(name):
    component = assert_plugin_registers(MODULES[name], "augmentations", name)
    assert component.obj is AUGMENTATIONS[name]
    assert component.settings.key == f"augment.{name}"


def test_the_contract_holds_for_every_registered_augmentation():
    registered = {c.name: c.obj for c in load_plugins().registry if c.category == "augmentations"}
    assert set(AUGMENTATIONS) | {"mirror"} <= set(registered)
    for cls in registered.values():
        assert_augmentation_contract(cls)
    always = settings(colour={"p": 1.0}, cutout={"p": 1.0, "fill": "random"}, conv={"p": 1.0})
    for cls in AUGMENTATIONS.values():
        assert_augmentation_contract(cls, always)


@pytest.mark.parametrize("name", sorted(AUGMENTATIONS))
def test_shape_dtype_range_kept_and_still_frames_stay_still(name):
    cls = AUGMENTATIONS[name]
    aug = cls(settings(**{name: {"p": 1.0}}))
    channels = 3 if cls.kind == "photometric" else 5  # geometry: visual, depth and thermal side by side
    images = still(channels)
    out = run(aug, images)
    assert out.shape == images.shape and out.dtype == torch.float32
    assert 0.0 <= float(out.min()) and float(out.max()) <= 1.0
    assert not torch.equal(out, images)
    for t in range(1, T):
        assert torch.equal(out[:, t], out[:, 0]), f"{name}: step {t} drew again"
    assert torch.equal(run(aug, images), out)  # the same seed, the same draws
    assert not torch.equal(run(aug, images, seed=1), out)


@pytest.mark.parametrize("name", sorted(AUGMENTATIONS))
def test_copies_of_one_window_get_different_draws(name):
    aug = AUGMENTATIONS[name](settings(**{name: {"p": 1.0}}))
    channels = 3 if AUGMENTATIONS[name].kind == "photometric" else 4
    out = run(aug, still(channels)[:1].expand(B, -1, -1, -1, -1))
    assert len({out[b].numpy().tobytes() for b in range(B)}) > B // 2  # (shift has 81 offsets: some may meet)


@pytest.mark.parametrize("name", sorted(AUGMENTATIONS))
def test_probability_zero_changes_nothing(name):
    aug = AUGMENTATIONS[name](settings(**{name: {"p": 0.0}}))
    images = frames(3 if AUGMENTATIONS[name].kind == "photometric" else 4)
    assert torch.equal(run(aug, images), images)


# --- what reaches which sensor ---------------------------------------------------------------------


def sensors_and_inputs():
    host = load_plugins()
    gs = GolemSettings()
    sensors = [VisualSensor(gs)] + [
        host.registry.get("sensors", name).obj(gs) for name in ("depth", "thermal", "audio")
    ]
    visual = frames(3, seed=3)
    inputs = {
        "visual": visual,
        "depth": visual[:, :, :1].clone(),  # aligned with the red channel
        "thermal": (visual[:, :, 1:2] > 0.5).float(),
        "audio": torch.randn(B, T, 2, 16),
    }
    return sensors, inputs


def test_geometry_moves_visual_depth_and_thermal_alike_never_audio():
    sensors, inputs = sensors_and_inputs()
    out = augment_inputs(inputs, sensors, [Shift(settings())], batch_generator(0, 0, 0))
    assert out["audio"] is inputs["audio"]
    assert torch.equal(out["depth"], out["visual"][:, :, :1])  # still the red channel, shifted alike
    assert torch.equal(out["thermal"], (out["visual"][:, :, 1:2] > 0.5).float())
    for name in ("visual", "depth", "thermal"):
        assert out[name].shape == inputs[name].shape and not torch.equal(out[name], inputs[name])
    cut = augment_inputs(inputs, sensors, [Cutout(settings(cutout={"p": 1.0}))], batch_generator(0, 0, 0))
    holes = {name: (cut[name] != inputs[name]).any(dim=2) for name in ("visual", "depth", "thermal")}
    assert torch.equal(holes["depth"], holes["visual"])  # the same rectangle in every image sensor
    assert (holes["thermal"] <= holes["visual"]).all() and holes["thermal"].any()  # (a mask may equal its mean)


def test_photometric_changes_the_colour_sensor_only():
    sensors, inputs = sensors_and_inputs()
    augs = [Colour(settings(colour={"p": 1.0})), RandomConv(settings(conv={"p": 1.0}))]
    out = augment_inputs(inputs, sensors, augs, batch_generator(0, 0, 0))
    assert not torch.equal(out["visual"], inputs["visual"])
    for name in ("depth", "thermal", "audio"):
        assert out[name] is inputs[name], name


# --- shift -------------------------------------------------------------------------------------------


def test_shift_moves_each_window_by_one_offset_within_pad():
    pad = 4
    index = torch.arange(T * H * W, dtype=torch.float64).view(1, T, 1, H, W).expand(B, -1, -1, -1, -1)
    out = run(Shift(settings(shift={"pad": pad})), index.clone())
    offsets = []
    for b in range(B):
        per_step = set()
        for t in range(T):
            value = int(out[b, t, 0, H // 2, W // 2])
            assert value // (H * W) == t  # never another step's frame
            per_step.add(((value % (H * W)) // W - H // 2, value % W - W // 2))
        assert len(per_step) == 1, f"window {b} shifted by {per_step} across its steps"
        (dy, dx) = per_step.pop()
        assert abs(dy) <= pad and abs(dx) <= pad
        offsets.append((dy, dx))
        shifted = torch.roll(index[b], (-dy, -dx), dims=(-2, -1))  # inside, a shift is a roll
        assert torch.equal(out[b, :, :, pad:-pad, pad:-pad], shifted[:, :, pad:-pad, pad:-pad])
    assert len(set(offsets)) > 1


def test_shift_repeats_the_border_into_the_padding():
    image = torch.zeros(1, 1, 1, H, W)
    image[..., 0, :] = 1.0  # the top row lit
    out = run(Shift(settings(shift={"pad": 4})), image.expand(64, -1, -1, -1, -1).contiguous())
    lit = (out[:, 0, 0] == 1.0).all(dim=-1)  # [windows, H]: rows fully lit
    counts = lit.sum(dim=-1)
    assert set(counts.tolist()) <= set(range(0, 6)) and max(counts.tolist()) > 1  # up to pad + 1 copies of the edge
    for window, n in zip(lit, counts.tolist()):
        assert window[:n].all() and not window[n:].any()  # from the top, no hole


# --- colour ------------------------------------------------------------------------------------------


def test_colour_matrices_are_exact_identity_at_neutral_factors_and_keep_grey_grey():
    one, zero = torch.ones(1), torch.zeros(1)
    assert torch.equal(colour_matrices(one, one, zero)[0], torch.eye(3))
    grey = torch.full((3,), 0.4)
    for hue in (0.1, -0.3, 0.5):
        rotated = colour_matrices(one, one, torch.tensor([hue]))[0] @ grey
        torch.testing.assert_close(rotated, grey)  # a hue rotation turns about the grey axis
    desaturated = colour_matrices(one, zero, zero)[0] @ torch.tensor([1.0, 0.0, 0.0])
    torch.testing.assert_close(desaturated, torch.full((3,), 0.299))


def test_colour_brightness_alone_scales_each_window_by_one_factor():
    aug = Colour(settings(colour={"p": 1.0, "contrast": 0.0, "saturation": 0.0, "hue": 0.0, "brightness": 0.3}))
    images = frames() * 0.5  # far from the clip
    out = run(aug, images)
    ratio = out / images
    for b in range(B):
        factor = ratio[b].flatten()
        torch.testing.assert_close(factor, factor[:1].expand_as(factor))
        assert 0.7 <= float(factor[0]) <= 1.3


def test_colour_contrast_blends_each_frame_with_its_mean_grey():
    aug = Colour(settings(colour={"p": 1.0, "brightness": 0.0, "saturation": 0.0, "hue": 0.0, "contrast": 0.5}))
    images = 0.25 + 0.5 * frames()
    out = run(aug, images)
    grey = torch.tensor([0.299, 0.587, 0.114]).view(1, 1, 3, 1, 1)
    mean_grey = (images * grey).sum(dim=2, keepdim=True).mean(dim=(-2, -1), keepdim=True)
    away = (images - mean_grey).abs() > 0.05  # where the ratio is well defined
    factor = (out - mean_grey) / (images - mean_grey)
    for b in range(B):
        kappa = factor[b][away[b]]
        assert (kappa - kappa.median()).abs().max() < 1e-3 and abs(float(kappa.median()) - 1.0) <= 0.5 + 1e-4


# --- cutout ------------------------------------------------------------------------------------------


def test_cutout_fills_one_rectangle_per_window_with_the_frames_mean():
    cfg = {"p": 1.0, "min_size": 0.2, "max_size": 0.3}
    images = frames(4) + 2.0  # never equal to a fill by chance
    out = run(Cutout(settings(cutout=cfg)), images)
    means = images.mean(dim=(-2, -1), keepdim=True)
    for b in range(B):
        hole = out[b] != images[b]  # [T, C, H, W]
        assert torch.equal(hole, hole[:1, :1].expand_as(hole))  # one place for all steps and channels
        rows, cols = hole[0, 0].any(dim=1).nonzero().flatten(), hole[0, 0].any(dim=0).nonzero().flatten()
        h, w = len(rows), len(cols)
        assert 0.2 * H - 1 <= h <= 0.3 * H + 1 and 0.2 * W - 1 <= w <= 0.3 * W + 1
        assert int(hole[0, 0].sum()) == h * w and rows.diff().eq(1).all() and cols.diff().eq(1).all()
        filled = torch.where(hole, out[b], torch.nan)
        torch.testing.assert_close(
            filled.nanmean(dim=(-2, -1)), means[b, :, :, 0, 0], rtol=0, atol=1e-6
        )  # each frame's own channel means


def test_cutout_random_fill_is_one_colour_per_window():
    out = run(Cutout(settings(cutout={"p": 1.0, "fill": "random"})), frames(3) + 2.0)
    for b in range(B):
        inside = out[b][out[b] < 1.5].view(T, 3, -1)
        assert torch.equal(inside, inside[:1, :, :1].expand_as(inside))


def test_cutout_sizes_must_be_in_order():
    with pytest.raises(SettingsError, match="augment.cutout.*min_size 0.5 is larger than max_size 0.2"):
        load_settings(
            overrides=[("flag --set", {"augment.cutout.min_size": 0.5, "augment.cutout.max_size": 0.2})], environ={}
        )


# --- conv ----------------------------------------------------------------------------------------------


def test_conv_rescales_each_chosen_window_into_the_unit_range_and_leaves_the_others():
    images = frames()
    out = run(RandomConv(settings(conv={"p": 0.5})), images)
    changed = [b for b in range(B) if not torch.equal(out[b], images[b])]
    assert 0 < len(changed) < B
    for b in changed:
        assert float(out[b].min()) == 0.0 and float(out[b].max()) == 1.0


def test_conv_is_a_linear_filter_of_each_window():
    """A window's output is linear in its input up to the rescaling: half the input, the same output."""
    aug = RandomConv(settings(conv={"p": 1.0}))
    images = frames()
    torch.testing.assert_close(run(aug, images), run(aug, images * 0.5), atol=1e-5, rtol=1e-5)


# --- selection and settings through the command line -------------------------------------------------------------

RUNNER = CliRunner(env={"COLUMNS": "200"})


def config_show(*flags: str) -> dict:
    result = RUNNER.invoke(build_app(), ["config", "show", "--json", *flags])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["settings"]


def test_plugin_flags_select_augmentations_through_the_cli():
    assert config_show()["training.augmentations"] == {"value": [], "source": "default"}
    shown = config_show("--plugin", "shift", "--plugin", "colour", "--set", "augment.shift.pad=2")
    assert shown["training.augmentations"] == {"value": ["shift", "colour"], "source": "flag --plugin"}
    assert shown["augment.shift.pad"] == {"value": 2, "source": "flag --set"}
    assert shown["augment.colour.hue"]["value"] == 0.1
    assert config_show("--plugin", "shift", "--plugin", "no:shift")["training.augmentations"]["value"] == []
    assert config_show("--plugin", "no:mirror")["training.mirror"] == {"value": False, "source": "flag --plugin"}


def test_an_unknown_name_or_value_is_one_line():
    result = RUNNER.invoke(build_app(), ["config", "show", "--plugin", "shfit"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "unknown component 'shfit' (did you mean 'shift'?)" in lines[0], result.stderr
    assert "augmentations: colour, conv, cutout, mirror, shift" in lines[0]
    result = RUNNER.invoke(build_app(), ["config", "show", "--set", "augment.shift.pad=0"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "augment.shift.pad" in result.stderr


def test_plugins_list_shows_the_augmentations():
    result = RUNNER.invoke(build_app(), ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    plugins = {p["plugin"]: p for p in json.loads(result.stdout)["plugins"]}
    assert plugins["core"]["components"]["augmentations"] == ["mirror"]
    for name in AUGMENTATIONS:
        assert plugins[name]["distribution"] == "golem-augment"
        assert plugins[name]["components"] == {"augmentations": [name]}


def test_build_keeps_the_selected_order():
    gs = GolemSettings.model_validate({"training": {"augmentations": ["conv", "shift", "cutout"]}})
    built = build_augmentations(gs, load_plugins().registry)
    assert [type(a) for a in built] == [RandomConv, Shift, Cutout]
    assert np.all([a.settings is gs for a in built])
