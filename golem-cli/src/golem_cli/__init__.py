"""The ``golem`` command line."""
