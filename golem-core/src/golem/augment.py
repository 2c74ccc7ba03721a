"""The augmentation interface: a training batch's images changed per window, one random draw across its steps.

An augmentation plugin subclasses :class:`Augmentation` and registers the class
through ``register_augmentations``. ``training.augmentations`` (``--plugin NAME``)
selects them; training builds them with :func:`build_augmentations` and, for every
training batch, after it is loaded and before the optimiser step, calls
:func:`augment_inputs` with a generator from :func:`batch_generator`. Validation,
the audit and play never see them.

Which sensors an augmentation reaches follows its ``kind`` and the sensors'
:attr:`golem.sensors.Sensor.image` / :attr:`~golem.sensors.Sensor.colour`:

* ``geometry`` (shift, cutout): every image sensor of the batch at once — their
  channels side by side in one ``[B, T, C, H, W]`` call, so aligned sensors (visual,
  depth, thermal) get the same draw and stay aligned;
* ``photometric`` (colour jitter, random convolution): each colour sensor (RGB in
  ``[0, 1]``) alone, never depth, thermal or audio.

Sensors that are not images (audio) are never touched. Draws come from one CPU
``torch.Generator`` per batch seeded from (training seed, epoch, batch, rank), so a
seeded run is repeatable whatever the threads. The left-right mirror is an
augmentation too (``mirror``, built in), but it is applied where the batch is loaded
(the dataset's mirrored twins, actions permuted) and switched by ``training.mirror``:
its class names that setting as :attr:`Augmentation.switch`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from golem.errors import GolemError, SettingsError

if TYPE_CHECKING:
    import torch

    from golem.registry import Registry
    from golem.sensors import Sensor
    from golem.settings import GolemSettings

Kind = Literal["geometry", "photometric"]
GEOMETRY: Kind = "geometry"
PHOTOMETRIC: Kind = "photometric"
KINDS: tuple[Kind, ...] = (GEOMETRY, PHOTOMETRIC)


class Augmentation(ABC):
    """A random transform of a window's images, one draw per window.

    Class attributes:
        name: component name (``shift``).
        kind: ``"geometry"`` (moves or occludes pixels: every image sensor alike) or
            ``"photometric"`` (changes colours: the colour sensor only).
        settings_model: the augmentation's own settings (a :class:`golem.settings.ComponentSettings`
            keyed ``augment.<name>``), or ``None``; read them with :func:`golem.settings.section`.
        switch: a boolean setting that turns this augmentation on instead of ``training.augmentations``
            (``training.mirror``), for an augmentation applied where the batch is loaded, not by
            :meth:`__call__`; ``None`` for the others.
    """

    name: ClassVar[str]
    kind: ClassVar[Kind]
    settings_model: ClassVar[Any] = None
    switch: ClassVar[str | None] = None

    def __init__(self, settings: GolemSettings) -> None:
        self.settings = settings

    @abstractmethod
    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The augmented images.

        Args:
            images: float ``[B, T, C, H, W]`` on any device: ``B`` windows of ``T`` steps. A geometry
                call holds every image sensor's channels (in ``brain.sensors`` order); a photometric
                call one colour image, ``C = 3``, values in ``[0, 1]``. Not modified.
            generator: a CPU ``torch.Generator``; draw every random parameter from it (on the CPU,
                then move it to ``images.device``): one draw per row ``b``, used at every step ``t``.

        Returns:
            float ``[B, T, C, H, W]``, same dtype and device; values stay within the input's range
            (images in ``[0, 1]`` stay in ``[0, 1]``).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, kind={self.kind!r})"


def _switched(settings: GolemSettings, path: str) -> bool:
    node: Any = settings
    for part in path.split("."):
        node = getattr(node, part)
    return bool(node)


def selected_augmentations(settings: GolemSettings, registry: Registry) -> list[str]:
    """Names of every augmentation a training run with ``settings`` uses: those switched on by their
    setting (``mirror`` by ``training.mirror``), then ``training.augmentations`` in order."""
    on = [
        comp.name
        for comp in registry
        if comp.category == "augmentations"
        and getattr(comp.obj, "switch", None)
        and _switched(settings, comp.obj.switch)
    ]
    return on + list(settings.training.augmentations)


def build_augmentations(settings: GolemSettings, registry: Registry) -> list[Augmentation]:
    """Instances of ``training.augmentations``, in order.

    Raises:
        UnknownComponentError: a name is not registered (lists the known ones).
        SettingsError: a name is switched by its own setting (``mirror``: ``training.mirror``).
    """
    out: list[Augmentation] = []
    for name in settings.training.augmentations:
        cls = registry.get("augmentations", name).obj
        switch = getattr(cls, "switch", None)
        if switch:
            raise SettingsError(
                f"training.augmentations: {name!r} is switched by {switch} (--plugin {name} or --plugin no:{name}), "
                "not listed"
            )
        out.append(cls(settings))
    return out


def batch_generator(seed: int, epoch: int, batch: int, rank: int = 0) -> torch.Generator:
    """The CPU generator of one training batch's draws, seeded from (training seed, epoch, batch index, rank).

    The same four numbers give the same draws in any process, whatever the threads; data-parallel
    ranks (which hold different rows of a batch) draw independently.
    """
    import torch

    words = np.random.SeedSequence([int(seed), int(epoch), int(batch), int(rank)]).generate_state(2, np.uint32)
    return torch.Generator().manual_seed((int(words[0]) << 31) ^ int(words[1]))


def augment_inputs(
    inputs: Mapping[str, torch.Tensor],
    sensors: Sequence[Sensor],
    augmentations: Sequence[Augmentation],
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """``inputs`` with ``augmentations`` applied in order (each to the sensors its kind reaches).

    Args:
        inputs: sensor name → float ``[B, T, *shape]`` (a :class:`golem.data.dataset.Batch`'s inputs);
            image sensors' shape is ``[C, H, W]``.
        sensors: the model's sensors (their ``image`` and ``colour`` flags decide what is reached).
        augmentations: from :func:`build_augmentations`; switched ones (``mirror``) are skipped.
        generator: the batch's generator (:func:`batch_generator`).

    Returns:
        a new mapping; sensors no augmentation reaches keep their tensors.

    Raises:
        GolemError: the image sensors of a geometry augmentation differ in height or width.
    """
    out = dict(inputs)
    images = [s.name for s in sensors if s.image and s.name in out]
    colour = [s.name for s in sensors if s.image and s.colour and s.name in out]
    for aug in augmentations:
        if aug.switch:
            continue
        if aug.kind == PHOTOMETRIC:
            for name in colour:
                out[name] = aug(out[name], generator)
        elif images:
            out.update(_geometry(aug, {name: out[name] for name in images}, generator))
    return out


def _geometry(
    aug: Augmentation, images: dict[str, torch.Tensor], generator: torch.Generator
) -> dict[str, torch.Tensor]:
    """One call of a geometry augmentation on every image sensor's channels side by side."""
    import torch

    if len(images) == 1:
        ((name, x),) = images.items()
        return {name: aug(x, generator)}
    sizes = {name: tuple(x.shape[-2:]) for name, x in images.items()}
    if len(set(sizes.values())) > 1:
        raise GolemError(
            f"augmentation {aug.name!r} moves every image sensor alike, but their sizes differ: "
            + ", ".join(f"{n} {h}x{w}" for n, (h, w) in sizes.items())
        )
    channels = [x.shape[2] for x in images.values()]
    moved = aug(torch.cat(list(images.values()), dim=2), generator)
    return dict(zip(images, torch.split(moved, channels, dim=2)))


__all__ = [
    "GEOMETRY",
    "KINDS",
    "PHOTOMETRIC",
    "Augmentation",
    "Kind",
    "augment_inputs",
    "batch_generator",
    "build_augmentations",
    "selected_augmentations",
]
