"""The core commands of ``golem``; plugins add more through ``register_commands``."""
