"""The keys a person holds now, read from the X display with pynput (a global listener, no window focus needed).

Key names are pynput's: a character key is its lower-case character
(``"a"``, ``"2"``), a special key its ``Key`` name (``"shift"`` is LEFT SHIFT,
``"shift_r"``, ``"ctrl"``, ``"space"``, ``"left"``, …).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from golem.errors import GolemError
from golem.extras import require
from golem.runtime.session import check_display


def key_name(key: Any) -> str:
    """pynput ``Key`` or ``KeyCode`` → its name here (``Key.shift`` → ``"shift"``, ``KeyCode('A')`` → ``"a"``)."""
    name = getattr(key, "name", None)
    if isinstance(name, str):
        return name
    char = getattr(key, "char", None)
    if isinstance(char, str) and char:
        return char.lower()
    return f"vk{getattr(key, 'vk', '?')}"


class Keyboard:
    """The set of keys held now; a context manager around pynput's listener thread.

    Raises:
        GolemError: no X display, or pynput cannot read the keyboard (one line).
    """

    def __init__(self) -> None:
        check_display()
        require("pynput", "reading the keyboard")  # a missing pynput: what to install
        try:
            from pynput import keyboard
        except Exception as exc:  # Xlib failing to connect
            raise GolemError(f"cannot read the keyboard with pynput ({type(exc).__name__}: {exc})") from None
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._listener = keyboard.Listener(on_press=self._press, on_release=self._release)

    def _press(self, key: Any) -> None:
        with self._lock:
            self._held.add(key_name(key))

    def _release(self, key: Any) -> None:
        with self._lock:
            self._held.discard(key_name(key))

    def __enter__(self) -> Keyboard:
        self._listener.start()
        self._listener.wait()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._listener.stop()

    def held(self, name: str) -> bool:
        """Whether key ``name`` is held now."""
        with self._lock:
            return name in self._held

    def buttons(self, action_names: Sequence[str], bindings: Mapping[str, Sequence[str]]) -> list[int]:
        """One 0/1 per action: pressed while any of its bound keys is held."""
        with self._lock:
            held = set(self._held)
        return [int(any(k in held for k in bindings.get(name, ()))) for name in action_names]


__all__ = ["Keyboard", "key_name"]
