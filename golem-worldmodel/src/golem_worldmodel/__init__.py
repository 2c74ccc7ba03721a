"""Golem world model (Ha & Schmidhuber, 2018) for ViZDoom: V (a VAE), M (an MDN-RNN), the dream, C (CMA-ES).

Modules, in pipeline order: :mod:`presets` (sizes), :mod:`actions` (the three
discrete actions), :mod:`collect` (random rollouts), :mod:`vae`, :mod:`latents`
(per-frame mu/logvar), :mod:`mdnrnn`, :mod:`training` (V and M loops),
:mod:`dream_env` (the dream as a Gymnasium vector env), :mod:`controller`,
:mod:`evolution` (CMA-ES), :mod:`real_runner` (the controller in the engine),
:mod:`render` (GIF); :mod:`checkpoints` and :mod:`paths` hold files,
:mod:`commands` the ``golem dream`` CLI, :mod:`env_factory` the registered
``dream`` environment and :mod:`plugin` the ``golem`` entry point.
"""

__version__ = "0.1.0"
