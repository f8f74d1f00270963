"""``python -m experiments.cli``: the same as the ``meeplelab`` console script."""

from experiments.cli.main import main

main()
