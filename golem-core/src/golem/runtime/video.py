"""Video of what the agent saw: every tic's RGB screen into a ``.gif`` or ``.mp4``, as a rollout observer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from golem.errors import GolemError
from golem.extras import require
from golem.runtime.rollout import Observer

#: Frames per second of a written video: one frame per tic.
VIDEO_FPS = 35
VIDEO_SUFFIXES = (".gif", ".mp4")


class VideoWriter:
    """Writes the RGB screens the agent saw (uint8 ``[H, W, 3]`` per tic) to a ``.gif`` or ``.mp4``.

    MP4 frames stream to ffmpeg (``imageio-ffmpeg``); GIF frames are kept and
    written by Pillow on :meth:`close` with the delays of :func:`gif_durations`
    (Pillow merges identical consecutive frames and adds up their delays, so the
    timing stays real).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.suffix = path.suffix.lower()
        if self.suffix not in VIDEO_SUFFIXES:
            raise GolemError(f"--video must end in .gif or .mp4, got {path.name}")
        self.frames = 0
        self._gif: list[np.ndarray] = []
        self._mp4: Any = None
        for module in ("PIL.Image",) if self.suffix == ".gif" else ("imageio.v2", "imageio_ffmpeg"):
            require(module, f"writing {self.suffix} video")
        if not path.parent.is_dir():
            raise GolemError(f"cannot write video {path}: folder {path.parent} does not exist")

    def add(self, frame: np.ndarray | None) -> None:
        """Append one screen (uint8 ``[H, W, 3]``); ``None`` or other shapes are skipped."""
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3:
            return
        if self.suffix == ".mp4":
            if self._mp4 is None:  # opened at the first frame: a failed start leaves no empty file
                import imageio.v2 as imageio

                self._mp4 = imageio.get_writer(str(self.path), fps=VIDEO_FPS, macro_block_size=8, codec="libx264")
            self._mp4.append_data(frame)
        else:
            self._gif.append(np.array(frame, copy=True))
        self.frames += 1

    def close(self) -> None:
        """Finish the file."""
        try:
            if self._mp4 is not None:
                self._mp4.close()
                self._mp4 = None
            elif self._gif:
                from PIL import Image

                images = [Image.fromarray(f) for f in self._gif]
                images[0].save(
                    self.path, save_all=True, append_images=images[1:], duration=gif_durations(len(images)), loop=0
                )
                self._gif = []
        except OSError as exc:
            raise GolemError(f"cannot write video {self.path}: {exc.strerror or exc}") from None


class VideoObserver(Observer):
    """Adds every tic's RGB screen (``state.screen_buffer``, uint8 ``[H, W, 3]``) to a video."""

    def __init__(self, writer: VideoWriter) -> None:
        self.writer = writer

    def before_tic(self, state: Any) -> None:
        self.writer.add(state.screen_buffer)


def gif_durations(frames: int, fps: float = VIDEO_FPS) -> list[int]:
    """Per-frame GIF delays in ms (whole centiseconds, as GIF stores them) whose running sum keeps real time.

    At 35 tics/s a frame lasts 28.6 ms; GIF can only say 20 or 30, so the delays
    alternate such that frame ``i`` ends within 5 ms of ``i / fps`` seconds.
    """
    ends = [round((i + 1) * 1000 / fps, -1) for i in range(frames)]
    return [int(end - start) for start, end in zip([0, *ends[:-1]], ends)]
