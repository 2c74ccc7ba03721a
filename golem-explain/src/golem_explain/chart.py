"""The audit's chart: grouped bars of precision, recall and F1 per action (``golem run audit --chart``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from golem.extras import require

if TYPE_CHECKING:
    from golem.diagnostics.audit import AuditReport


def write_chart(report: AuditReport, path: Path | str) -> Path:
    """Grouped bars of precision, recall and F1 per action (0/0 drawn as 0, support under each name); PNG.

    Uses matplotlib's Agg backend (no display needed). Returns the path written.
    """
    require("matplotlib", "the audit's chart", install="golem-explain").use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(report.actions)
    x = np.arange(len(names))
    width = 0.27
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names) + 2), 4.5))
    try:
        for k, (label, color) in enumerate((("precision", "#4C72B0"), ("recall", "#DD8452"), ("F1", "#55A868"))):
            attr = label.lower()
            values = [getattr(report.actions[n], attr) or 0.0 for n in names]
            ax.bar(x + (k - 1) * width, values, width, label=label, color=color)
        ax.set_xticks(x)
        ax.set_xticklabels([f"{n}\n(n={report.actions[n].support})" for n in names], fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"score at threshold {report.threshold:g}")
        ax.set_title(
            f"Audit of {Path(report.model).name}: {len(report.episodes)} episode(s), {report.steps} steps, "
            f"exact match {report.exact_match:.3f}",
            fontsize=10,
        )
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    return path


__all__ = ["write_chart"]
