"""Examine: Grad-CAM of the live model at one step of a recorded episode.

The model runs the episode from its first step with carried state (windows of
``L``, as the agent lives) up to step ``T``; then, from that state, it takes
step ``T`` and Grad-CAM (captum ``LayerGradCam``) explains its most probable
action on the last conv layer of every image cortex (visual — with depth when
it joins —, and thermal when enabled). The figure shows each cortex's input
frame beside its heat map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog
import torch
from torch import nn

from golem.data.store import TrajectoryStore
from golem.diagnostics.audit import check_store_has_sensors, read_windows, to_inputs
from golem.errors import GolemError
from golem.extras import require
from golem.learning.archives import load_model
from golem.learning.device import select_device

if TYPE_CHECKING:
    from golem.registry import Registry
    from golem.sensors import Sensor
    from golem.settings import GolemSettings

log = structlog.get_logger("golem_explain.examine")

#: What installs captum and matplotlib (this distribution depends on them).
INSTALL = "golem-explain"


@dataclass
class ExamineResult:
    """What :func:`examine` explained and where the picture went.

    Attributes:
        path: the PNG written.
        episode, step: the explained step.
        action: the most probable action (the Grad-CAM target) and its ``probability``.
        probabilities: per action name, ``sigmoid(logit)`` at the step.
        recorded: actions pressed in the recording at the step.
        layers: per cortex (owner sensor name), the conv layer explained (module path).
    """

    path: str
    episode: int
    step: int
    action: str
    probability: float
    probabilities: dict[str, float]
    recorded: list[str]
    layers: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "episode": self.episode,
            "step": self.step,
            "action": self.action,
            "probability": self.probability,
            "probabilities": self.probabilities,
            "recorded": self.recorded,
            "layers": self.layers,
        }


class StepForward(nn.Module):
    """``model`` one step from a fixed state, as captum wants it: positional inputs → logits ``[N, A]``.

    ``forward(*xs)`` takes one float tensor ``[N, *shape]`` per sensor, in ``names`` order.
    """

    def __init__(self, model: nn.Module, names: list[str], hx: torch.Tensor) -> None:
        super().__init__()
        self.model = model
        self.names = names
        self.register_buffer("hx", hx.detach())

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        inputs = {name: x.unsqueeze(1) for name, x in zip(self.names, xs)}
        logits, _ = self.model(inputs, self.hx.expand(xs[0].shape[0], -1))
        return logits[:, 0]


def last_conv(module: nn.Module) -> tuple[str, nn.Conv2d] | None:
    """``(name, layer)`` of the last ``nn.Conv2d`` inside ``module`` (registration order), or ``None``."""
    found = None
    for name, sub in module.named_modules():
        if isinstance(sub, nn.Conv2d):
            found = (name, sub)
    return found


def image_cortices(model: nn.Module) -> dict[str, tuple[str, nn.Conv2d]]:
    """Per owner sensor whose steps are images ``[C, H, W]``, the last conv layer of its cortex."""
    out: dict[str, tuple[str, nn.Conv2d]] = {}
    for owner, cortex in model.cortices.items():
        if len(model.spec.sensor(owner).shape) != 3:
            continue
        conv = last_conv(cortex)
        if conv is not None:
            out[owner] = (f"cortices.{owner}.{conv[0]}", conv[1])
    return out


@torch.no_grad()
def state_at(
    model: nn.Module,
    store: TrajectoryStore,
    info: Any,
    sensors: list[Sensor],
    step: int,
    sequence_length: int,
    device: torch.device,
) -> torch.Tensor:
    """The state ``hx[1, S]`` after steps ``[0, step)`` of an episode, run in windows of ``L`` from zero."""
    hx = model.initial_state(1, device)
    for start in range(0, step, sequence_length):
        n = min(sequence_length, step - start)
        raw, _ = read_windows(store, [info], [start], [n], sensors)
        _, hx = model(to_inputs(raw, sensors, device), hx)
    return hx


def heat_map(attribution: torch.Tensor, size: tuple[int, int]) -> np.ndarray:
    """Grad-CAM ``[1, 1, h, w]`` → float32 ``[H, W]`` in ``[0, 1]``: bilinear upsampling, ReLU, max-normalised."""
    LayerAttribution = require("captum.attr", "golem run examine", install=INSTALL).LayerAttribution

    up = LayerAttribution.interpolate(attribution.detach(), size, interpolate_mode="bilinear")
    cam = np.maximum(up[0, 0].cpu().numpy().astype(np.float32), 0.0)
    peak = float(cam.max())
    return cam / peak if peak > 0 else cam


def _display(raw: np.ndarray) -> tuple[np.ndarray, str | None]:
    """A stored image step ``[C, H, W]`` → what ``imshow`` shows: RGB ``[H, W, 3]`` in [0, 1], or gray ``[H, W]``."""
    x = raw.astype(np.float32)
    lo, hi = float(x.min()), float(x.max())
    scale = 255.0 if raw.dtype == np.uint8 and hi > 1 else (hi - lo if hi > lo else 1.0)
    x = (x - (0.0 if raw.dtype == np.uint8 and hi > 1 else lo)) / scale
    if x.shape[0] >= 3:
        return np.clip(x[:3].transpose(1, 2, 0), 0, 1), None
    return np.clip(x[0], 0, 1), "gray"


def default_examine_path(settings: GolemSettings, episode: int, step: int) -> Path:
    """``<data.root>/reports/examine-<profile>-ep<E>-t<T>.png``."""
    return settings.data.root / "reports" / f"examine-{settings.brain.profile}-ep{episode}-t{step}.png"


def examine(
    settings: GolemSettings,
    registry: Registry,
    episode: int,
    step: int,
    *,
    model: Path | None = None,
    store: Path | None = None,
    out: Path | None = None,
    sequence_length: int | None = None,
) -> ExamineResult:
    """Grad-CAM of the most probable action at ``step`` of ``episode``, from the live (carried) state.

    Args:
        settings: ``data`` (store, models, reports), ``training.device``.
        registry: where the model builder and sensors are looked up.
        episode: store episode id.
        step: step index ``0 <= step < length``.
        model: checkpoint path (default: the profile's active model).
        store: store directory (default: ``settings.store_path()``).
        out: PNG path (default :func:`default_examine_path`).
        sequence_length: window length while warming the state (default: the checkpoint's
            training ``sequence_length``, else ``training.sequence_length``; the state is the
            same either way, only the chunking differs).

    Raises:
        GolemError: missing or corrupt checkpoint, no store, unknown episode, step out of
            range, a store lacking the model's sensors, or a model without an image cortex.
    """
    LayerGradCam = require("captum.attr", "golem run examine", install=INSTALL).LayerGradCam

    path, restored = load_model(settings, registry, model)
    spec = restored.spec
    store_path = Path(store) if store is not None else settings.store_path()
    if not TrajectoryStore.exists(store_path):
        raise GolemError(f"no trajectory store at {store_path}; record one with `golem run record`")
    device = select_device(settings.training.device)
    net = restored.model.to(device).eval()
    layers = image_cortices(net)
    if not layers:
        raise GolemError(f"model {path} has no image cortex with a conv layer to explain")
    trained_L = (restored.metadata.get("training") or {}).get("sequence_length")
    L = int(sequence_length or trained_L or settings.training.window)
    names = list(spec.action_names) or [f"ACTION_{i}" for i in range(spec.n_actions)]
    with TrajectoryStore.open(store_path) as opened:
        info = opened.get(episode)
        if not 0 <= step < info.length:
            raise GolemError(f"step {step} is outside episode {episode} (steps 0..{info.length - 1})")
        check_store_has_sensors([info], spec)
        hx = state_at(net, opened, info, spec.sensors, step, L, device)
        raw, actions = read_windows(opened, [info], [step], [1], spec.sensors)
    xs = to_inputs(raw, spec.sensors, device)
    wrapper = StepForward(net, spec.sensor_names, hx).to(device)
    args = tuple(xs[name][:, 0] for name in spec.sensor_names)  # each [1, *shape]
    with torch.no_grad():
        probs = torch.sigmoid(wrapper(*args))[0].float().cpu().numpy()
    target = int(probs.argmax())
    maps: dict[str, np.ndarray] = {}
    for owner, (_, layer) in layers.items():
        with torch.enable_grad():
            attribution = LayerGradCam(wrapper, layer).attribute(args, target=target)
        maps[owner] = heat_map(attribution, tuple(spec.sensor(owner).shape[1:]))
    recorded = [n for n, a in zip(names, actions[0, 0]) if a]
    result = ExamineResult(
        path="",
        episode=int(episode),
        step=int(step),
        action=names[target],
        probability=float(probs[target]),
        probabilities={n: float(p) for n, p in zip(names, probs)},
        recorded=recorded,
        layers={owner: lname for owner, (lname, _) in layers.items()},
    )
    target_path = Path(out) if out is not None else default_examine_path(settings, episode, step)
    images = {owner: raw[owner][0, 0] for owner in layers}
    result.path = str(write_figure(result, images, maps, target_path, model_name=path.name, joins=net.groups))
    log.info(
        "examine.done",
        path=result.path,
        episode=episode,
        step=step,
        action=result.action,
        probability=round(result.probability, 4),
    )
    return result


def write_figure(
    result: ExamineResult,
    images: dict[str, np.ndarray],
    maps: dict[str, np.ndarray],
    path: Path,
    *,
    model_name: str = "",
    joins: dict[str, list[str]] | None = None,
) -> Path:
    """Per cortex: the input frame, then the frame with its Grad-CAM over it (jet, α 0.5); PNG via Agg.

    Args:
        images: per cortex, the stored step ``[C, H, W]``.
        maps: per cortex, the heat map ``[H, W]`` in ``[0, 1]``.
        joins: per cortex, the sensors that join it (named in the title; only the owner's frame is shown).
    """
    require("matplotlib", "golem run examine", install=INSTALL).use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = 2 * len(maps)
    fig, axes = plt.subplots(1, cols, figsize=(3.6 * cols, 4.2), squeeze=False)
    try:
        for k, owner in enumerate(maps):
            shown, cmap = _display(images[owner])
            left, right = axes[0, 2 * k], axes[0, 2 * k + 1]
            left.imshow(shown, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
            joined = "".join(f" (+{name})" for name in (joins or {}).get(owner, []))
            left.set_title(f"{owner} input{joined}", fontsize=10)
            right.imshow(shown, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
            right.imshow(maps[owner], cmap="jet", alpha=0.5, vmin=0, vmax=1, interpolation="bilinear")
            empty = "\n(no positive evidence)" if float(maps[owner].max()) <= 0 else ""
            right.set_title(f"{owner} Grad-CAM → {result.action}{empty}", fontsize=10)
            for ax in (left, right):
                ax.axis("off")
        pressed = "+".join(result.recorded) or "nothing"
        fig.suptitle(
            f"{model_name}  episode {result.episode}, step {result.step}: "
            f"{result.action} p={result.probability:.2f}  (recorded: {pressed})",
            fontsize=10,
        )
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
    return path


__all__ = [
    "ExamineResult",
    "StepForward",
    "default_examine_path",
    "examine",
    "heat_map",
    "image_cortices",
    "last_conv",
    "state_at",
    "write_figure",
]
