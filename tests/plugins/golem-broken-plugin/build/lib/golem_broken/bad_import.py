"""Fails at import time, as a plugin with a missing dependency would."""

import golem_dependency_that_does_not_exist  # noqa: F401
