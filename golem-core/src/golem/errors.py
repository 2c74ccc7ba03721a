"""Errors a user can cause. The CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class GolemError(Exception):
    """A problem the user can fix (bad input, missing file, unknown name).

    ``exit_code`` is what the CLI exits with; the message is one line.
    """

    exit_code: int = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class SettingsError(GolemError):
    """An invalid setting: names the key, the value and what is allowed."""


class UnknownComponentError(GolemError):
    """A component name that no loaded plugin registered."""


class DuplicateComponentError(GolemError):
    """Two plugins registered the same name in one category."""
