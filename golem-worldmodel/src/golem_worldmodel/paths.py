"""Where one pipeline run keeps its files (``--run DIR``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunPaths:
    """The files of a run directory, one per stage."""

    root: Path

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def vae(self) -> Path:
        return self.root / "vae.safetensors"

    @property
    def latents(self) -> Path:
        return self.root / "latents.safetensors"

    @property
    def rnn(self) -> Path:
        return self.root / "mdnrnn.safetensors"

    def member(self, i: int) -> Path:
        """Member ``i`` of an MDN-RNN ensemble: :attr:`rnn` for 0, ``mdnrnn_<i>.safetensors`` after it."""
        return self.rnn if i == 0 else self.root / f"mdnrnn_{i}.safetensors"

    @property
    def controller(self) -> Path:
        return self.root / "controller.safetensors"

    @property
    def controller_log(self) -> Path:
        return self.root / "controller_log.jsonl"

    @property
    def evaluation(self) -> Path:
        return self.root / "evaluation.json"

    @property
    def gif(self) -> Path:
        return self.root / "dream.gif"

    @property
    def rounds(self) -> Path:
        """``golem dream iterate``'s record: one entry per finished round."""
        return self.root / "rounds.json"

    def round_dir(self, r: int) -> Path:
        """Round ``r``'s own files (its controller and CMA-ES log)."""
        return self.root / "rounds" / str(r)

    @property
    def calibration_cache(self) -> Path:
        """The held actions' real-engine survival, measured once (it depends only on the engine)."""
        return self.root / "calibration_real.json"
