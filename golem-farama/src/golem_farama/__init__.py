"""Golem in the Farama formats: the Gymnasium environment (``Golem/<scenario>-v0``) and Minari datasets.

Importing this package registers the Gymnasium ids (Gymnasium 1.x reads no entry points, so an import is
what registers them): ``gymnasium.make("golem_farama:Golem/basic-v0")`` works in a fresh interpreter, and
loading Golem's plugins (every ``golem`` command, :func:`golem.plugins.load_plugins`) imports it.
"""

from __future__ import annotations

from golem_farama.registration import register_envs

register_envs()

__all__ = ["register_envs"]
