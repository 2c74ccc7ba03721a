"""The augmentation API of the core: what reaches which sensor, seeding, selection, the contract and the mirror.

Fake augmentations stand in for the plugins' (golem-augment tests its own): ``rows`` (geometry) rolls the
image down by a per-window draw, ``invert`` (photometric) inverts a window's colours.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from golem.augment import (
    GEOMETRY,
    PHOTOMETRIC,
    Augmentation,
    augment_inputs,
    batch_generator,
    build_augmentations,
    selected_augmentations,
)
from golem.builtin.mirror import MirrorAugmentation
from golem.builtin.visual import VisualSensor
from golem.data.dataset import SequenceDataset, build_pointers
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.errors import GolemError, SettingsError, UnknownComponentError
from golem.images import ImageSensor
from golem.plugins import hookimpl, load_plugins
from golem.profiles import BASIC
from golem.selection import check_selected, plugin_overrides
from golem.sensors import Sensor
from golem.settings import GolemSettings, load_settings
from golem.testing import assert_augmentation_contract, load_with

B, T = 6, 4


class Rows(Augmentation):
    """Geometry: roll every channel of a window down by one drawn number of rows (0-7)."""

    name = "rows"
    kind = GEOMETRY

    def __call__(self, images, generator):
        shifts = torch.randint(0, 8, (images.shape[0],), generator=generator).tolist()
        return torch.stack([torch.roll(x, s, dims=-2) for x, s in zip(images, shifts)])


class Invert(Augmentation):
    """Photometric: invert a window's colours with probability 1/2."""

    name = "invert"
    kind = PHOTOMETRIC

    def __call__(self, images, generator):
        flip = (torch.rand(images.shape[0], generator=generator) < 0.5).view(-1, 1, 1, 1, 1)
        return torch.where(flip, 1.0 - images, images)


class Depthish(ImageSensor):
    name, key, image_channels = "depthish", "depthishes", 1

    def configure(self, game):  # pragma: no cover - never played
        pass

    def _read(self, state):  # pragma: no cover
        return None


class Soundish(Sensor):
    name, key, dtype = "soundish", "soundishes", np.dtype(np.float32)
    shape = (2, 8)

    def configure(self, game):  # pragma: no cover - never played
        pass

    def _read(self, state):  # pragma: no cover
        return None


def inputs(settings: GolemSettings) -> tuple[list[Sensor], dict[str, torch.Tensor]]:
    """Visual, a depth-like image sensor equal to visual's red channel, and a sound-like non-image sensor."""
    sensors = [VisualSensor(settings), Depthish(settings), Soundish(settings)]
    visual = torch.rand(B, T, 3, 64, 64, generator=torch.Generator().manual_seed(5))
    return sensors, {"visual": visual, "depthish": visual[:, :, :1].clone(), "soundish": torch.randn(B, T, 2, 8)}


def test_sensors_say_whether_they_are_images_and_colour() -> None:
    assert VisualSensor.image and VisualSensor.colour
    assert Depthish.image and not Depthish.colour
    assert not Soundish.image and not Soundish.colour  # the safe defaults
    host = load_plugins()
    for name, image, colour in (
        ("depth", True, False),
        ("thermal", True, False),
        ("audio", False, False),
        ("automap", False, False),  # a view from above: not aligned with the screen
    ):
        if name in host.registry.names("sensors"):
            cls = host.registry.get("sensors", name).obj
            assert (cls.image, cls.colour) == (image, colour), name


def test_geometry_moves_every_image_sensor_alike_and_leaves_the_rest() -> None:
    settings = GolemSettings()
    sensors, x = inputs(settings)
    out = augment_inputs(x, sensors, [Rows(settings)], batch_generator(0, 0, 0))
    assert not torch.equal(out["visual"], x["visual"])
    torch.testing.assert_close(out["depthish"], out["visual"][:, :, :1], rtol=0, atol=0)  # aligned, same draw
    assert out["soundish"] is x["soundish"]
    assert x["depthish"].shape == out["depthish"].shape == (B, T, 1, 64, 64)


def test_photometric_reaches_the_colour_sensor_only() -> None:
    settings = GolemSettings()
    sensors, x = inputs(settings)
    out = augment_inputs(x, sensors, [Invert(settings)], batch_generator(0, 0, 0))
    assert not torch.equal(out["visual"], x["visual"])
    assert out["depthish"] is x["depthish"] and out["soundish"] is x["soundish"]


def test_augmentations_apply_in_order_and_switched_ones_are_skipped() -> None:
    settings = GolemSettings()
    sensors, x = inputs(settings)
    both = augment_inputs(
        x, sensors, [Rows(settings), MirrorAugmentation(settings), Invert(settings)], batch_generator(1, 2, 3)
    )
    gen = batch_generator(1, 2, 3)
    by_hand = Invert(settings)(Rows(settings)(torch.cat([x["visual"], x["depthish"]], dim=2), gen)[:, :, :3], gen)
    torch.testing.assert_close(both["visual"], by_hand, rtol=0, atol=0)


def test_image_sensors_of_other_sizes_are_refused_for_geometry() -> None:
    settings = GolemSettings()
    sensors, x = inputs(settings)
    x["depthish"] = torch.rand(B, T, 1, 32, 32)
    with pytest.raises(GolemError, match="sizes differ: visual 64x64, depthish 32x32"):
        augment_inputs(x, sensors, [Rows(settings)], batch_generator(0, 0, 0))


def test_batch_generator_depends_on_seed_epoch_batch_and_rank_only() -> None:
    def draw(*key: int) -> list[int]:
        return torch.randint(0, 2**30, (4,), generator=batch_generator(*key)).tolist()

    torch.manual_seed(99)
    first = draw(7, 1, 2, 0)
    torch.manual_seed(100)  # the global RNG does not matter
    assert draw(7, 1, 2, 0) == first
    others = [draw(8, 1, 2, 0), draw(7, 2, 2, 0), draw(7, 1, 3, 0), draw(7, 1, 2, 1)]
    assert all(o != first for o in others) and len({tuple(o) for o in others}) == 4


# --- selection -----------------------------------------------------------------------------------


class _Fakes:
    """A plugin registering the fake augmentations."""

    @staticmethod
    @hookimpl
    def register_augmentations(register):
        register("rows", Rows)
        register("invert", Invert)


def host_with_fakes():
    return load_with(_Fakes)


def resolve(flags: list[str], host) -> GolemSettings:
    base = load_settings(environ={}, cwd=Path("/nonexistent"), registry=host.registry).settings
    chosen = plugin_overrides(flags, base, host.registry)
    return load_settings(
        overrides=[("flag --plugin", chosen)], environ={}, cwd=Path("/nonexistent"), registry=host.registry
    ).settings


def test_plugin_flags_add_and_remove_augmentations_in_order() -> None:
    host = host_with_fakes()
    assert GolemSettings().training.augmentations == []  # off unless selected
    settings = resolve(["rows", "invert", "no:rows", "rows"], host)
    assert settings.training.augmentations == ["invert", "rows"]
    assert [type(a) for a in build_augmentations(settings, host.registry)] == [Invert, Rows]
    check_selected(settings, host.registry, ["augmentations"])
    assert selected_augmentations(settings, host.registry) == ["mirror", "invert", "rows"]


def test_mirror_is_an_augmentation_switched_by_training_mirror() -> None:
    host = host_with_fakes()
    assert host.registry.get("augmentations", "mirror").owner.plugin == "core"
    assert plugin_overrides(["no:mirror"], GolemSettings(), host.registry) == {"training.mirror": False}
    assert plugin_overrides(["augmentations:mirror"], GolemSettings(), host.registry) == {"training.mirror": True}
    off = resolve(["no:mirror", "rows"], host)
    assert off.training.mirror is False and selected_augmentations(off, host.registry) == ["rows"]
    listed = GolemSettings.model_validate({"training": {"augmentations": ["mirror"]}})
    with pytest.raises(SettingsError, match=r"'mirror' is switched by training.mirror"):
        check_selected(listed, host.registry, ["augmentations"])
    with pytest.raises(SettingsError, match=r"'mirror' is switched by training.mirror"):
        build_augmentations(listed, host.registry)


def test_unknown_augmentation_lists_the_known_ones() -> None:
    host = host_with_fakes()
    with pytest.raises(
        UnknownComponentError,
        match=r"unknown component 'rowz' \(did you mean 'rows'\?\).*"
        r"augmentations: invert, mirror, rows",
    ):
        plugin_overrides(["rowz"], GolemSettings(), host.registry)
    typo = GolemSettings.model_validate({"training": {"augmentations": ["rowz"]}})
    with pytest.raises(
        UnknownComponentError,
        match=r"training.augmentations: unknown augmentation 'rowz'.*known: "
        r"invert, mirror, rows",
    ):
        check_selected(typo, host.registry, ["augmentations"])


# --- the contract ---------------------------------------------------------------------------------


def test_the_contract_passes_the_core_and_the_fakes() -> None:
    for cls in (MirrorAugmentation, Rows, Invert):
        assert_augmentation_contract(cls)


class PerStep(Rows):
    def __call__(self, images, generator):
        return torch.stack(
            [Rows.__call__(self, images[:, t : t + 1], generator)[:, 0] for t in range(images.shape[1])], 1
        )


class GlobalRandom(Invert):
    def __call__(self, images, generator):
        return super().__call__(images, torch.default_generator)


class PerChannel(Rows):
    def __call__(self, images, generator):
        return torch.cat([Rows.__call__(self, images[:, :, c : c + 1], generator) for c in range(images.shape[2])], 2)


class BatchMean(Invert):
    def __call__(self, images, generator):
        return (images + images.mean()) / 2


class InPlace(Invert):
    def __call__(self, images, generator):
        return images.mul_(0.5)


class OutOfRange(Invert):
    def __call__(self, images, generator):
        return images * 2


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (PerStep, "identical frames of a window differ"),
        (GlobalRandom, "the same generator seed gave another output"),
        (PerChannel, "equal channels changed at different pixels"),
        (BatchMean, "changing window 0 changed other windows"),
        (InPlace, "modified in place"),
        (OutOfRange, r"images in \[0, 1\] became"),
    ],
)
def test_the_contract_catches_broken_augmentations(cls, message) -> None:
    with pytest.raises(AssertionError, match=message):
        assert_augmentation_contract(cls)


# --- the mirror, unchanged ---------------------------------------------------------------------------


def test_mirror_selected_as_a_component_reads_the_same_twins_as_before(tmp_path: Path) -> None:
    """``--plugin mirror`` is ``training.mirror = true``: the same pointer-map twins, flipped images and swapped
    buttons as before, and applying the component to a loaded batch changes nothing (no second mirror)."""
    host = load_plugins()
    with TrajectoryStore.create(tmp_path / "store", chunk_steps=5) as store:
        for eid, length in enumerate((9, 4, 13)):
            frames = np.random.default_rng(eid).integers(0, 256, (length, 3, 64, 64), dtype=np.uint8)
            actions = np.zeros((length, len(BASIC)), dtype=np.uint8)
            actions[:, BASIC.index("TURN_LEFT")] = 1
            meta = EpisodeMeta(profile="basic", action_names=list(BASIC), scenario="basic", source="expert")
            store.write_episode(meta, {"frames": frames, "actions": actions})
        for flags, mirrored in ((["mirror"], True), (["no:mirror"], False)):
            settings = resolve(flags, host)
            settings = settings.model_copy(
                update={"training": settings.training.model_copy(update={"sequence_length": 4})}
            )
            sensors = [VisualSensor(settings)]
            ds = SequenceDataset.from_store(store, sensors, BASIC, settings.training)
            assert np.array_equal(ds.pointers, build_pointers(store.episodes(), 4, mirrored))
            assert build_augmentations(settings, host.registry) == []
        ds = SequenceDataset(store, store.episodes(), sensors, BASIC, 4, mirror=True)
        p = ds.pointers
        plain = np.flatnonzero(~p["mirrored"])
        twins = [
            int(np.flatnonzero(p["mirrored"] & (p["episode"] == p["episode"][i]) & (p["start"] == p["start"][i]))[0])
            for i in plain
        ]
        a, b = ds.load_batch(plain), ds.load_batch(twins)
        np.testing.assert_array_equal(b.inputs["visual"].numpy(), a.inputs["visual"].numpy()[..., ::-1])
        left, right = BASIC.index("TURN_LEFT"), BASIC.index("TURN_RIGHT")
        assert (
            (a.targets[..., left] == 1).all()
            and (b.targets[..., right] == 1).all()
            and (b.targets[..., left] == 0).all()
        )
        same = augment_inputs(a.inputs, sensors, [MirrorAugmentation(settings)], batch_generator(0, 0, 0))
        assert same["visual"] is a.inputs["visual"]
