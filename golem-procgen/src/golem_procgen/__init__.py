"""Golem procedural maps (seed 001, §5): the curriculum's phases and priors, generators, the explorer expert.

Modules: :mod:`space` (parameters, phases, conditional priors, sampling),
:mod:`layout` (the built-in generator's rooms and corridors), :mod:`themes`
(textures), :mod:`wadwriter` (lumps through omgifol), :mod:`navigation` (the
sidecar and path planning), :mod:`maps` (WAD + sidecar + scenario config),
:mod:`builtin` (the ``builtin`` generator), :mod:`wadnav` (the sidecar of any
WAD's map, from :mod:`mapdata` — the map's lumps —, :mod:`specials` — what its
line specials do — and :mod:`raster` — sectors onto cells), :mod:`explorer`
(the expert), :mod:`preview` (automap pictures), :mod:`commands` (``golem
procgen``; ``nav`` in :mod:`navcommand`) and :mod:`plugin` (the ``golem`` entry
point).
"""

__version__ = "0.1.0"
