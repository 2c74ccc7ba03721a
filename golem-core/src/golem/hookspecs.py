"""Golem's hook specifications.

A plugin is a module (named by an entry point in the ``golem`` group) that
implements some of these hooks with ``@golem.hookimpl``. Every registration
hook receives a ``register`` callback owned by the core registry::

    register(name: str, component: object) -> None

``name`` is what users type (``--plugin focal``); it must be unique within its
category, and a clash is an error naming both owners.
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("golem")

Register = Callable[[str, Any], None]


# --- Sensing ---------------------------------------------------------------


@hookspec
def register_sensors(register: Register) -> None:
    """Register sensor classes (see :class:`golem.sensors.Sensor`).

    ``register(name, cls)``: ``cls(settings)`` builds a sensor that switches on
    its engine buffer, extracts one stored array per tic, mirrors it and
    provides the cortex (encoder) the model uses for it.
    """


# --- Learning --------------------------------------------------------------


@hookspec
def register_models(register: Register) -> None:
    """Register model builders.

    ``register(name, builder)``: ``builder(spec)`` returns an ``nn.Module`` with
    ``forward(inputs, hx) -> (logits[B, T, A], hx)``.
    """


@hookspec
def register_losses(register: Register) -> None:
    """Register multi-label losses over action logits.

    ``register(name, builder)``: ``builder(settings, n_actions)`` returns an
    ``nn.Module`` mapping ``(logits[B, T, A], targets[B, T, A])`` to a scalar.
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


# --- Worlds ----------------------------------------------------------------


@hookspec
def register_map_generators(register: Register) -> None:
    """Register procedural map generators.

    ``register(name, builder)``: ``builder(settings)`` writes WAD files the
    ViZDoom session can load.
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


# --- Command line ----------------------------------------------------------


@hookspec
def register_commands(app: Any) -> None:
    """Add commands to the ``golem`` typer application ``app``.

    Add a sub-application with ``app.add_typer(sub, name=...)`` or commands
    with ``@app.command()``.
    """
