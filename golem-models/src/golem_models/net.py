"""The Golem network: one cortex per sensor → recurrent core → linear head to action logits.

Inputs arrive keyed by sensor name as float network tensors ``[B, T, *shape]``
(``Sensor.to_network`` already applied). A sensor that ``joins`` another (depth
joins visual) is concatenated with it along the channel axis before that
sensor's cortex. Cortices run on ``[B·T, ...]``; their features are
concatenated, standardised feature by feature (``spec.feature_norm == "batch"``),
run through the core with carried state ``hx[B, S]``, and mapped to ``A`` logits
per step.

Why the standardiser: a cortex's ReLU features are all positive and, on a
mostly static scene, almost the same from frame to frame, and Adam steps grow
that common part (on ``take_cover``: mean 0.16, spread across frames 0.021 at
initialisation; mean 5.3, spread 0.038 after 150 steps). The core's saturating
gates (CfC's tanh backbone, the LSTM's sigmoids) then see a large, nearly
constant input and the network only learns how often each button is pressed.
Centring and scaling each feature over the samples lets the core see what
changes between frames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import nn

from golem.errors import GolemError
from golem.learning.modelspec import ModelSpec

CoreFactory = Callable[[int, int], nn.Module]


class DoomNet(nn.Module):
    """Cortices + recurrent core + head, built from a :class:`ModelSpec`.

    Attributes:
        spec: the spec it was built from.
        cortices: ``{owner sensor name: encoder}``.
        standardise: :class:`torch.nn.BatchNorm1d` over the ``in_features`` cortex features
            (``spec.feature_norm == "batch"``), else ``nn.Identity``. Training mode uses the
            statistics of the ``B·T`` samples of the batch; evaluation mode (validation, audit,
            play, any batch size) the running averages, which training re-estimates at the
            final weights (:func:`golem.learning.calibration.recalibrate_norms`).
        core: the recurrent core (``state_size`` wide state ``[B, S]``).
        head: ``Linear(core.out_features, n_actions)``.
    """

    def __init__(self, spec: ModelSpec, core: CoreFactory) -> None:
        super().__init__()
        self.spec = spec
        self.groups: dict[str, list[str]] = {
            owner: [s.name for s in joiners] for owner, joiners in spec.cortex_groups().items()
        }
        self.cortices = nn.ModuleDict()
        for owner, joiners in spec.cortex_groups().items():
            extra = sum(s.channels for s in joiners)
            cortex = spec.sensor(owner).cortex(extra_channels=extra)
            if not isinstance(getattr(cortex, "out_features", None), int):
                raise GolemError(f"sensor {owner!r} built a cortex without an integer out_features")
            self.cortices[owner] = cortex
        self.in_features = sum(c.out_features for c in self.cortices.values())
        self.standardise: nn.Module = (
            nn.BatchNorm1d(self.in_features) if spec.feature_norm == "batch" else nn.Identity()
        )
        self.core = core(self.in_features, spec.working_memory)
        self.head = nn.Linear(self.core.out_features, spec.n_actions)

    # --- state -------------------------------------------------------------

    @property
    def state_size(self) -> int:
        """Width S of the carried state ``hx[B, S]``."""
        return int(self.core.state_size)

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> torch.Tensor:
        """Zero state ``[batch_size, S]`` on ``device`` (default: the model's)."""
        if device is None:
            device = self.head.weight.device
        return torch.zeros(batch_size, self.state_size, device=device, dtype=self.head.weight.dtype)

    @staticmethod
    def reset_rows(hx: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Zero the rows of ``hx[B, S]`` where ``mask[B]`` (bool) is true; returns a new tensor.

        Call it *before* the forward pass on rows whose sequence starts an episode.
        """
        if mask.shape != hx.shape[:1]:
            raise ValueError(f"mask {tuple(mask.shape)} does not match state rows {tuple(hx.shape[:1])}")
        return torch.where(mask.to(device=hx.device, dtype=torch.bool).unsqueeze(-1), torch.zeros_like(hx), hx)

    # --- running -----------------------------------------------------------

    def encode(self, inputs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Per-step features ``[B, T, in_features]`` from ``inputs[name] = [B, T, *shape]``, standardised."""
        missing = [name for name in self.spec.sensor_names if name not in inputs]
        if missing:
            raise KeyError(f"model inputs lack sensor(s) {missing}; got {sorted(inputs)}")
        first = inputs[next(iter(self.groups))]
        batch, steps = first.shape[:2]
        features = []
        for owner, joiners in self.groups.items():
            x = inputs[owner]
            if joiners:
                x = torch.cat([x, *(inputs[name] for name in joiners)], dim=2)
            flat = x.reshape(batch * steps, *x.shape[2:])
            features.append(self.cortices[owner](flat))
        # Cortices follow an ambient autocast (bf16 training); what comes after them is float32.
        joined = torch.cat(features, dim=-1).float()  # [B·T, in_features]
        with torch.autocast(joined.device.type, enabled=False):
            return self.standardise(joined).reshape(batch, steps, -1)

    def forward(
        self,
        inputs: Mapping[str, torch.Tensor],
        hx: torch.Tensor | None = None,
        timespans: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``inputs[name] = [B, T, *shape]`` (float), ``hx[B, S]`` or ``None`` (zeros).

        ``timespans[B, T]``: engine tics elapsed at each step (``None``: one each);
        a continuous-time core (CfC) integrates over them, a discrete one ignores them.

        Returns ``(logits[B, T, A], hx[B, S])``.
        """
        out, hx = self.features(inputs, hx, timespans)
        with torch.autocast(out.device.type, enabled=False):
            return self.head(out), hx

    def features(
        self,
        inputs: Mapping[str, torch.Tensor],
        hx: torch.Tensor | None = None,
        timespans: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The core's outputs ``[B, T, H]``, which :attr:`head` maps to the logits, and the new ``hx[B, S]``.

        What :meth:`forward` computes before its head (``H = head.in_features``), for heads of
        one's own on the same features (reinforcement learning's value head). ``starts[B, T]``
        (bool, optional) zeroes a row's state just before each step where it is true (an
        episode starts there), so one call runs a rollout segment across episode boundaries;
        ``None`` resets nothing, as :meth:`forward`.
        """
        features = self.encode(inputs)
        if hx is None:
            hx = self.initial_state(features.shape[0], features.device)
        with torch.autocast(features.device.type, enabled=False):  # the recurrent core stays float32
            if starts is None:
                return self._core(features, hx, timespans)
            steps = features.shape[1]
            if starts.shape != features.shape[:2]:
                raise ValueError(f"starts {tuple(starts.shape)} does not match the steps {tuple(features.shape[:2])}")
            # The core runs over the stretches between the steps where some row starts an episode.
            cuts = (torch.nonzero(starts[:, 1:].any(dim=0)).flatten() + 1).tolist()
            bounds = [0, *cuts, steps]
            outs = []
            for a, b in zip(bounds[:-1], bounds[1:]):
                hx = self.reset_rows(hx, starts[:, a])
                spans = None if timespans is None else timespans[:, a:b]
                out, hx = self._core(features[:, a:b], hx, spans)
                outs.append(out)
            return torch.cat(outs, dim=1), hx

    def _core(
        self, features: torch.Tensor, hx: torch.Tensor, timespans: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.core(features, hx, timespans) if timespans is not None else self.core(features, hx)

    def step(
        self,
        inputs: Mapping[str, torch.Tensor],
        hx: torch.Tensor | None = None,
        timespans: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One decision of live play: ``inputs[name] = [B, *shape]``, ``hx[B, S]`` → ``(logits[B, A], hx[B, S])``.

        ``timespans[B]``: tics since the previous decision (``None``: one). The same as
        :meth:`forward` on ``T = 1``.
        """
        spans = None if timespans is None else timespans.reshape(-1, 1)
        logits, hx = self.forward({name: x.unsqueeze(1) for name, x in inputs.items()}, hx, spans)
        return logits[:, 0], hx
