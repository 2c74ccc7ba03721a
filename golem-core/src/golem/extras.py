"""Optional dependencies: the core's features that need a library not every install has.

Each optional library belongs to an extra of ``golem-core``; a feature that
needs one calls :func:`require` where it starts, so a missing library is one
line saying what to install, never an ``ImportError`` deep in a run.
``make demo`` and ``make test`` install every extra (``golem-core[all]``).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from golem.errors import GolemError

#: The extra of ``golem-core`` that installs each optional module (import name → extra).
EXTRAS: dict[str, str] = {
    "pynput": "human",
    "imageio": "video",
    "imageio_ffmpeg": "video",
    "PIL": "video",
}


def require(module: str, what: str, install: str | None = None) -> ModuleType:
    """Import ``module`` for the feature ``what``, or say in one line what installs it.

    Args:
        module: the import name (``"pynput.keyboard"``; its top-level package decides the extra).
        what: the feature, as the message names it (``"golem run intervene"``).
        install: what ``pip install`` installs it (a plugin's own dependency: ``"golem-explain"``);
            default the extra of ``golem-core`` that :data:`EXTRAS` names.

    Raises:
        GolemError: the module is not installed.
    """
    try:
        return import_module(module)
    except ImportError as exc:
        top = module.split(".", 1)[0]
        extra = EXTRAS.get(top)
        install = install or (f"'golem-core[{extra}]'" if extra else None)
        if install is None or (exc.name or "").split(".", 1)[0] != top:
            raise
        raise GolemError(f"{what} needs {top}: pip install {install}") from None


__all__ = ["EXTRAS", "require"]
