"""Golem's hook specifications.

A plugin is a module (named by an entry point in the ``golem`` group) that
implements some of these hooks with ``@golem.hookimpl``. Every registration
hook receives a ``register`` callback owned by the core registry::

    register(name: str, component: object, settings: type[ComponentSettings] | None = None) -> None

``name`` is what users type (``--plugin focal``); it must be unique within its
category, and a clash is an error naming both owners. ``settings`` is the
component's own settings model (:class:`golem.settings.ComponentSettings` with
a dotted ``key`` such as ``loss.focal``); a class may declare it as its
``settings_model`` attribute instead. The core validates that section of every
user's settings with it, shows it in ``golem config show`` and hands it back
through :func:`golem.settings.section`. Every hook and argument here is
described for plugin authors in ``docs/plugins.md`` (a test keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("golem")

Register = Callable[..., None]


# --- Sensing ---------------------------------------------------------------


@hookspec
def register_sensors(register: Register) -> None:
    """Register sensor classes.

    ``register(name, cls)``: ``cls(settings: GolemSettings) -> Sensor`` (a
    :class:`golem.sensors.Sensor` subclass). The class declares ``key`` (its array
    in the store and in ``.npz`` files), ``dtype`` and ``step_shape`` (the store
    checks arrays against them), ``joins`` (feed another sensor's cortex), and
    optionally ``settings_model``. An instance switches on its engine buffer
    (``configure(game)``), extracts one stored array per tic (``extract(state)
    -> ndarray[*shape]``), mirrors it (``mirror(x[..., *shape])``), converts it for
    the network (``to_network(x[B, T, *shape]) -> float``), converts seed-layout
    arrays (classmethod ``from_legacy(source, array[T, ...]) -> ndarray[T, *shape]``)
    and builds its cortex (``cortex(extra_channels) -> nn.Module`` mapping
    ``[N, C, ...]`` to ``[N, out_features]``).
    """


# --- Data ------------------------------------------------------------------


@hookspec
def register_data_formats(register: Register) -> None:
    """Register exchange formats for ``golem data import/export --format NAME``.

    ``register(name, fmt)``; the core's ``npz`` is :class:`golem.data.store.npz.NpzFormat`. ``fmt`` has
    ``label`` (what reports call one import source: ``"file"``), ``takes_out`` (export uses ``--out``),
    ``sources(paths) -> [(shown name, source)]`` (nothing read yet), ``check(source, options, rules)``
    (read it as an import would, write nothing), ``write(store, source, options, rules) -> [episode ids]``
    and ``export(store, infos, target, rules, out, advance) -> (report, line)`` (``infos`` to the command's
    argument ``target``, ``advance()`` after each; the ``--json`` report and the line a person reads).
    ``options`` is an :class:`golem.data.store.npz.ImportOptions`, ``rules`` the sensors' arrays
    (:func:`golem.data.arrays.array_rules`). Every source is checked before any is written.
    """


# --- Learning --------------------------------------------------------------


@hookspec
def register_models(register: Register) -> None:
    """Register model builders.

    ``register(name, builder)``: ``builder(spec: ModelSpec) -> nn.Module`` (see
    :class:`golem.learning.modelspec.ModelSpec`). The module has
    ``forward(inputs, hx) -> (logits[B, T, A], hx[B, S])`` where
    ``inputs[sensor name]`` is float ``[B, T, *shape]`` and ``hx`` is ``[B, S]`` or
    ``None`` (zeros); ``step(inputs[B, *shape], hx) -> (logits[B, A], hx[B, S])``
    for live play; ``initial_state(batch_size, device) -> [B, S]``;
    ``reset_rows(hx[B, S], mask[B]) -> [B, S]`` (zero the rows that start an
    episode, before the forward pass); and ``state_size: int`` (S).
    """


@hookspec
def register_losses(register: Register) -> None:
    """Register multi-label losses over action logits.

    ``register(name, builder, settings=Model)``: ``builder(settings: GolemSettings,
    n_actions: int) -> nn.Module`` whose ``forward(logits[B, T, A], targets[B, T, A])``
    returns the scalar mean loss (targets are 0/1 floats). A loss with parameters
    declares a settings model keyed ``loss.<name>`` and reads it with
    :func:`golem.settings.section`.
    """


@hookspec
def register_samplers(register: Register) -> None:
    """Register batch samplers over the trajectory store's sequence windows.

    ``register(name, builder)``: ``builder(pointers, settings)`` returns an
    iterable with ``__len__``. ``pointers`` is a :class:`golem.data.dataset.SequenceDataset`
    or its pointer map (a :data:`golem.data.dataset.POINTER_DTYPE` array with fields
    ``episode``, ``start``, ``mirrored``, ``is_first``, ``recovery``, one record
    per window); ``settings`` is the :class:`golem.settings.GolemSettings` (or its
    ``training`` group). Each ``iter()`` runs one epoch and yields ``list[int]``
    of ``training.batch_size`` window indices, fed to
    ``SequenceDataset.load_batch``. The built-in ``stateful`` sampler is
    :class:`golem.data.sampling.StatefulStratifiedSampler`.
    """


@hookspec
def register_augmentations(register: Register) -> None:
    """Register training-time image augmentations, applied per window of a training batch.

    ``register(name, cls)``: ``cls(settings: GolemSettings)`` is a
    :class:`golem.augment.Augmentation` with ``kind`` = ``"geometry"`` (applied to every
    image sensor of the window alike: visual, depth, thermal) or ``"photometric"`` (the
    colour sensor only), and optionally ``settings_model`` (a section keyed ``augment.<name>``).
    Its ``__call__(images[B, T, C, H, W], generator) -> [B, T, C, H, W]`` takes float images
    (a geometry call gets every image sensor's channels at once, a photometric call RGB in
    ``[0, 1]``) and draws its parameters from ``generator`` (a CPU ``torch.Generator``
    seeded per batch): one draw per window (row ``b``), the same at every step ``t``,
    independent across rows. ``training.augmentations`` (or ``--plugin NAME``) selects them,
    in order; training applies them after a batch is loaded and before the optimiser step,
    never to validation, audit or play. Sensors that are not images are never touched.
    """


# --- Worlds ----------------------------------------------------------------


@hookspec
def register_map_generators(register: Register) -> None:
    """Register procedural map generators.

    ``register(name, builder)``: ``builder(settings: GolemSettings) -> generator``
    with ``build(config: Mapping[str, Any], seed: int, path: Path) -> MapInfo``:
    it writes a WAD to ``path`` (atomically: no half-written file is ever left
    there) that :func:`golem.wad.validate_wad` accepts and the ViZDoom
    session loads, and returns a mapping (or object with those attributes) with
    at least ``map`` (the map lump, e.g. ``MAP01``) and ``path``. The same
    ``config`` and ``seed`` give the same bytes.
    """


@hookspec
def register_experts(register: Register) -> None:
    """Register scripted experts: policies that read the engine's privileged state.

    ``register(name, cls)``: ``cls(action_names, settings)`` (the profile's
    button names in order, the run's :class:`golem.settings.GolemSettings`) is a
    :class:`golem.experts.Expert` with ``configure(game)`` (before ``init()``),
    ``reset(game)`` and ``act(game, state) -> list[int]`` (one 0/1 per action name).
    An expert with settings declares ``settings_model`` (a section under ``experts.``).
    """


@hookspec
def register_environments(register: Register) -> None:
    """Register environments (Gymnasium-compatible) that agents can be run in.

    ``register(name, factory)``: ``factory(settings, registry, **kwargs)``
    (:class:`golem.settings.GolemSettings`, :class:`golem.registry.Registry`)
    returns a ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv``.
    """


# --- Diagnostics -----------------------------------------------------------


@hookspec
def register_charts(register: Register) -> None:
    """Register chart drawers for the diagnostics' reports.

    ``register(name, draw)``: ``draw(report, path: Path) -> Path`` draws the report of the diagnostic ``name``
    as an image at ``path`` (creating its folder) and returns the path written; ``"audit"`` gets an
    :class:`golem.diagnostics.audit.AuditReport` (``golem run audit --chart``).
    """


# --- Command line ----------------------------------------------------------


@hookspec
def register_commands(app: Any) -> None:
    """Add commands to the ``golem`` typer application ``app``.

    Add a sub-application with ``app.add_typer(sub, name=...)`` or commands
    with ``@app.command()``. A command's errors a user can cause raise
    :class:`golem.errors.GolemError` (one line, non-zero exit).
    """


# --- Reinforcement ---------------------------------------------------------


@hookspec
def register_reward_shapers(register: Register) -> None:
    """Register reward shapers: extra reward for reinforcement fine-tuning, from the game variables.

    ``register(name, cls)``: ``cls(settings: GolemSettings)`` has ``variables`` (a tuple of
    ``vizdoom.GameVariable`` names it reads, e.g. ``("KILLCOUNT", "HEALTH")``) and
    ``__call__(before: Mapping[str, float], after: Mapping[str, float]) -> float``: the extra
    reward of one decision, from those variables just before the action and just after the tics
    it was held for (``before`` of the first decision of an episode is read at its start). The
    reward a policy learns from is the scenario's own plus the selected shapers' (their names
    in the ``rl.shapers`` setting of golem-rl, which weighs them there); a shaper with settings
    declares ``settings_model``. It must be a pure function of its arguments: it runs in the
    rollout workers, once per decision.
    """
