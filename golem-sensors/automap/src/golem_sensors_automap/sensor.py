"""Automap: the engine's map of the walls the player has seen, centred on the player and turned with it.

A Doom player presses Tab to see it; the engine draws it into its own buffer
(``automap_buffer``) in the screen's format. Only lines the player has seen are
drawn (ViZDoom's ``AutomapMode.NORMAL``), so the picture is a record of the walls
seen so far and of the openings in them not yet gone through, which a 64×64
first-person frame does not hold. The map turns with
the player (up is where it faces), is drawn in fixed greys (:data:`GREYS`) on
black (lines off the axes antialiased, so in darker greys at their edges), and
keeps its scale (:data:`SCALE`) on every map.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from golem.cortex import conv_cortex
from golem.images import SIZE, ImageSensor

#: The engine's scale of the drawn map (``viz_am_scale``; larger is closer): at 0.6 a 160×120 buffer spans about
#: 2,000 map units across (a phase-1 room of the builtin generator and the rooms around it).
SCALE = 0.6
#: Colours of what the map draws, as ``(CVAR, grey)``: walls white, steps and doors (floor or ceiling
#: changes) mid grey, exits and locked doors in greys of their own, the player's arrow light grey,
#: things and the background black. ``am_colorset 0`` makes the engine use them.
GREYS: tuple[tuple[str, str], ...] = (
    ("am_backcolor", "000000"),
    ("am_wallcolor", "ffffff"),
    ("am_specialwallcolor", "ffffff"),
    ("am_secretwallcolor", "ffffff"),
    ("am_fdwallcolor", "909090"),
    ("am_cdwallcolor", "909090"),
    ("am_efwallcolor", "909090"),
    ("am_tswallcolor", "000000"),
    ("am_interlevelcolor", "606060"),
    ("am_intralevelcolor", "606060"),
    ("am_lockedcolor", "d0d0d0"),
    ("am_yourcolor", "c0c0c0"),
    ("am_thingcolor", "000000"),
    ("am_gridcolor", "000000"),
    ("am_xhaircolor", "000000"),
)
#: The engine arguments that draw the map as described above.
GAME_ARGS: tuple[str, ...] = (
    "+am_followplayer 1",
    f"+viz_am_scale {SCALE}",
    "+am_colorset 0",
    "+am_customcolors 1",
    "+am_grid 0",
    "+am_cheat 0",
    *(f"+{cvar} {grey}" for cvar, grey in GREYS),
)


def block_edges(n: int, size: int = SIZE) -> np.ndarray:
    """Start index of each of ``size`` near-equal blocks of ``n`` pixels, laid out mirror-symmetrically.

    The left half's blocks start at ``⌊i·n/size⌋``; the right half's are their reflection, so for an even
    ``n`` flipping an image and then taking the blocks gives the flipped blocks (mirror augmentation then
    shows the map of the mirrored world). Blocks of a side shorter than ``size`` repeat pixels.
    """
    half = size // 2
    left = [(i * n) // size for i in range(half + 1)]  # boundaries 0 … half
    bounds = left + [n - left[size - i] for i in range(half + 1, size + 1)]  # … size (= n)
    return np.minimum(np.asarray(bounds[:size], dtype=np.intp), n - 1)


def block_max(image: np.ndarray, size: int = SIZE) -> np.ndarray:
    """``[H, W]`` uint8 → ``[size, size]``: the brightest pixel of each block (:func:`block_edges`).

    The map's lines are one pixel wide: a bilinear resize from 160×120 would blend them to a third of their
    grey (and thinner ones at larger buffers to less); the block maximum keeps every line at its grey.
    """
    rows = np.maximum.reduceat(image, block_edges(image.shape[0], size), axis=0)
    return np.ascontiguousarray(np.maximum.reduceat(rows, block_edges(image.shape[1], size), axis=1))


class AutomapSensor(ImageSensor):
    """What the player has seen of the map, from above, turned with the player; the brightest pixel per block
    to 64×64.

    Stored uint8 ``[1, 64, 64]`` under ``automaps``; network input float ``[0, 1]``; a cortex of its own
    (the map is not aligned with the screen, so geometry augmentations leave it alone). Mirror flips the
    width, as it flips the view: for the engine's even buffer widths, the mirrored map of the mirrored world.
    """

    name = "automap"
    key = "automaps"
    image_channels = 1
    image = False  # a view from above: a shift or crop of the screen does not move it

    @classmethod
    def resize_image(cls, image: np.ndarray) -> np.ndarray:
        """A stored map ``[1, H, W]`` → ``[1, 64, 64]`` as the buffer is resized (block maximum)."""
        return block_max(image[0])[None]

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        game.set_automap_buffer_enabled(True)
        game.set_automap_mode(vzd.AutomapMode.NORMAL)  # only what the player has seen
        game.set_automap_rotate(True)
        game.set_automap_render_textures(False)
        for arg in GAME_ARGS:
            game.add_game_args(arg)

    def _read(self, state: Any) -> np.ndarray | None:
        buffer = state.automap_buffer  # [H, W, 3] in the session's RGB24, or [H, W]; greys: R = G = B
        if buffer is None:
            return None
        grey = buffer[..., 0] if buffer.ndim == 3 else buffer
        return block_max(grey)[None]

    def to_network(self, x):
        """uint8 ``[B, T, 1, 64, 64]`` → float32 in ``[0, 1]``."""
        return x.float() / 255.0

    def cortex(self, extra_channels: int = 0):
        """``[N, 1 + extra_channels, 64, 64]`` → ``[N, 128]``: 3 × (conv 3×3 stride 2 + ReLU) (16, 32, 32 channels)."""
        return conv_cortex(1 + extra_channels, 3, channels=(16, 32, 32), features=128)
