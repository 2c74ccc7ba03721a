"""``python -m golem_cli …`` is the ``golem`` command (what ``torchrun -m golem_cli run train`` starts per process)."""

from golem_cli.app import main

if __name__ == "__main__":
    main()
