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
    "captum": "explain",
    "matplotlib": "explain",
    "torchinfo": "summary",
    "pynput": "human",
    "imageio": "video",
    "imageio_ffmpeg": "video",
    "PIL": "video",
    "gymnasium": "gym",
    "minari": "minari",
}


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` for the feature ``what``, or say in one line which extra installs it.

    Args:
        module: the import name (``"captum.attr"``; its top-level package decides the extra).
        what: the feature, as the message names it (``"golem run examine"``).

    Raises:
        GolemError: the module is not installed.
    """
    try:
        return import_module(module)
    except ImportError as exc:
        top = module.split(".", 1)[0]
        extra = EXTRAS.get(top)
        if extra is None or (exc.name or "").split(".", 1)[0] != top:
            raise
        raise GolemError(f"{what} needs {top}: pip install 'golem-core[{extra}]'") from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing anything when it cannot)."""
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


__all__ = ["EXTRAS", "available", "require"]
