"""Named sizes for the whole pipeline: ``tiny`` (tests), ``cpu`` (a 2-core machine), ``paper`` (Ha & Schmidhuber).

One :class:`Preset` holds every number the five stages need, so a run is
described by a preset name plus a few overrides, and every checkpoint stores
the preset it was trained with (its metadata), never guessed from file names.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Optional, get_type_hints

from pydantic import Field, create_model

from golem.errors import GolemError
from golem.settings import ComponentSettings
from golem.settings import section as settings_section


@dataclass(frozen=True)
class Preset:
    """Sizes and budgets of the world-model pipeline.

    Attributes are grouped by the stage that reads them; units are in the names
    (``*_episodes`` episodes, ``*_epochs`` passes over the data, ``*_steps``
    environment steps of one tic each).
    """

    name: str
    # collect
    episodes: int
    min_length: int = 100  # episodes shorter than this many steps are dropped (World Models)
    max_steps: int = 2100  # the take_cover time limit of the paper (60 s at 35 tics/s)
    hold_min: int = 1  # a random action is held for hold_min..hold_max tics
    hold_max: int = 10
    workers: int = 2
    # Probe episodes, collected after the random ones: each action held probe_hold_min..probe_hold_max
    # tics, so M sees where a held action leads. Random holds of 1–10 tics seldom carry the player far,
    # and a dream of one action held for hundreds of tics is otherwise M's guess (3–10× the real survival).
    probe_episodes: int = 0
    probe_hold_min: int = 50
    probe_hold_max: int = 300
    # take_cover's config turns the red damage flash off, so a hit barely shows in a frame; on, the
    # VAE encodes every hit and M learns what precedes a death (collection, checks and evaluation alike).
    screen_flashes: bool = False
    # VAE
    z_dim: int = 64
    vae_channels: tuple[int, ...] = (32, 64, 128, 256)
    vae_epochs: int = 10
    vae_batch: int = 100
    vae_lr: float = 1e-3
    vae_kl_tolerance: float = 0.5  # free bits per latent dim (nats), as in World Models
    vae_max_frames: int = 0  # frames sampled per epoch (0 = every frame)
    # MDN-RNN
    hidden: int = 512
    gaussians: int = 5
    rnn_epochs: int = 20
    rnn_seq_len: int = 64
    rnn_batch: int = 64
    rnn_lr: float = 1e-3
    done_pos_weight: float = 10.0  # BCE weight of the rare "died during this step" class
    reward_weight: float = 1.0
    # M trained this many times (seeds seed, seed + 1, …); the dream draws a member per step and dies
    # when the most pessimistic one (ensemble_death "max") or the drawn one ("drawn") says so. One
    # training's M overrates some held action 3–10× (bench_dream_calibration); CMA-ES finds it.
    rnn_members: int = 1
    ensemble_death: str = "max"
    # controller (CMA-ES)
    population: int = 64
    rollouts: int = 16
    generations: int = 300
    sigma0: float = 0.1
    temperature: float = 1.15
    warmup: int = 8
    dream_steps: int = 2100
    reward_mode: str = "survival"  # predicted | survival | mix
    reward_lambda: float = 1.0  # λ of mix = survival + λ · predicted
    termination: str = "threshold"  # threshold (p_done > 0.5) | sample (Bernoulli)
    real_every: int = 10  # generations between real-engine checks of the current best
    real_episodes: int = 4
    # evaluate
    eval_episodes: int = 100
    # iterate (``golem dream iterate``): after the first pipeline, ``rounds`` rounds of collect with the kept
    # controller (ε-random holds mixed in) → V fine-tuned ``round_vae_epochs`` and M ``round_rnn_epochs`` more
    # epochs on all data → CMA-ES from the kept controller for ``round_generations`` → real-engine check of
    # ``round_eval_episodes`` (kept only when it beats the last kept, then confirmed on fresh seeds) →
    # calibration; stops early once the dream is honest: every held action and the controller within
    # ``honest_ratio``× of the engine.
    rounds: int = 2
    round_episodes: int = 100
    explore_epsilon: float = 0.03  # chance per tic that a random action is held hold_min..hold_max tics
    round_vae_epochs: int = 0
    round_rnn_epochs: int = 10
    round_generations: int = 100
    round_eval_episodes: int = 30
    # A round that passes its check plays this many fresh seeds beside the last kept controller and is kept
    # only when its paired gain exceeds round_confirm_margin standard errors (0 episodes: no confirmation).
    round_confirm_episodes: int = 30
    round_confirm_margin: float = 1.0
    calibration_dreams: int = 256
    calibration_episodes: int = 10
    honest_ratio: float = 1.5
    stop_when_honest: bool = True  # False: run every round, honest dream or not (to see what rounds add)

    def __post_init__(self) -> None:
        if self.round_confirm_episodes < 0 or self.round_confirm_episodes == 1:
            raise GolemError(
                f"round_confirm_episodes must be 0 (no confirmation) or at least 2, got {self.round_confirm_episodes}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        out["vae_channels"] = list(self.vae_channels)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Preset:
        """Inverse of :meth:`to_dict`; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if "vae_channels" in kwargs:
            kwargs["vae_channels"] = tuple(int(c) for c in kwargs["vae_channels"])
        return cls(**kwargs)

    def with_overrides(self, **overrides: Any) -> Preset:
        """A copy with the non-``None`` ``overrides`` applied.

        Raises:
            GolemError: an override that names no preset field.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        known = {f.name for f in fields(self)}
        bad = sorted(set(given) - known)
        if bad:
            raise GolemError(f"unknown preset field(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
        return replace(self, **given)


PRESETS: dict[str, Preset] = {
    # Seconds: the end-to-end test's budget.
    "tiny": Preset(
        name="tiny",
        episodes=3,
        min_length=20,
        max_steps=200,
        workers=1,
        z_dim=8,
        vae_channels=(8, 16, 16, 32),
        vae_epochs=1,
        vae_batch=32,
        hidden=32,
        gaussians=2,
        rnn_epochs=1,
        rnn_seq_len=16,
        rnn_batch=4,
        population=4,
        rollouts=2,
        generations=2,
        warmup=4,
        dream_steps=50,
        real_every=2,
        real_episodes=1,
        eval_episodes=2,
        rnn_members=2,
        probe_episodes=1,
        rounds=1,
        round_episodes=2,
        round_rnn_epochs=1,
        round_generations=2,
        round_eval_episodes=2,
        round_confirm_episodes=2,
        calibration_dreams=8,
        calibration_episodes=1,
    ),
    # A 2-core CPU in well under an hour, collection to 100-episode evaluation.
    "cpu": Preset(
        name="cpu",
        episodes=300,
        workers=2,
        z_dim=32,
        vae_channels=(16, 32, 64, 128),
        vae_epochs=12,
        vae_batch=64,
        vae_max_frames=20000,
        hidden=256,
        gaussians=5,
        rnn_epochs=30,
        rnn_seq_len=64,
        rnn_batch=32,
        population=16,
        rollouts=8,
        generations=200,
        dream_steps=2100,
        real_every=10,
        real_episodes=4,
        eval_episodes=100,
        # The recipe with the best measured controllers: probe episodes and three MDN-RNNs (docs/world-model.md).
        probe_episodes=130,
        rnn_members=3,
        round_generations=80,
    ),
    # The original sizes (10,000 rollouts, z=64, 512 LSTM units, population 64 × 16 rollouts): a GPU job.
    "paper": Preset(name="paper", episodes=10000, workers=8),
}


def get_preset(name: str) -> Preset:
    """The preset called ``name``.

    Raises:
        GolemError: an unknown name (listing the known ones).
    """
    if name not in PRESETS:
        raise GolemError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]


def _settings_model() -> type[ComponentSettings]:
    """``dream``: the preset by name, and any of its fields overridden (``None``: the preset's value)."""
    hints = get_type_hints(Preset)
    overrides: dict[str, Any] = {
        f.name: (Optional[hints[f.name]], Field(None, description=f"override the preset's {f.name}"))
        for f in fields(Preset)
        if f.name != "name"
    }
    model = create_model(
        "DreamSettings",
        __base__=ComponentSettings,
        preset=(str, Field("cpu", description=f"named sizes: {', '.join(PRESETS)}")),
        **overrides,
    )
    model.key = "dream"
    model.__doc__ = "``dream``: the world-model pipeline's preset and per-field overrides (``None``: the preset's)."
    return model


#: The world model's settings section: ``dream.preset`` and ``dream.<field>`` overrides of the preset.
DreamSettings = _settings_model()


def preset_from_settings(settings: Any, name: str | None = None, stored: Preset | None = None, **given: Any) -> Preset:
    """The run's preset: ``stored`` (the run folder's), else ``name``, else ``dream.preset``; then overrides.

    Overrides apply lowest first: the ``dream.<field>`` settings (``golem.toml``,
    ``GOLEM_DREAM__…``, ``--set dream.…``), then ``given`` (a command's own options).

    Raises:
        GolemError: an unknown preset name, or a run that uses another preset than ``name``.
    """
    section = settings_section(settings, DreamSettings)
    if stored is not None:
        if name is not None and name != stored.name:
            raise GolemError(f"this run uses preset {stored.name!r}, not {name!r}; use another --run folder")
        base = stored
    else:
        base = get_preset(name or section.preset)
    from_settings = {k: v for k, v in section.model_dump().items() if k != "preset" and v is not None}
    if "vae_channels" in from_settings:
        from_settings["vae_channels"] = tuple(from_settings["vae_channels"])
    return base.with_overrides(**from_settings).with_overrides(**given)
