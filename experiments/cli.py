"""``meeplelab``: the command-line front. Each verb lives in its own module and is imported
only when used, so ``meeplelab --help`` is instant and a broken optional piece never blocks
the others."""

from __future__ import annotations

import importlib
import sys

import click

from envs.core.errors import MeeplelabError

#: verb -> "module:click_command"
COMMANDS: dict[str, str] = {
    "play": "experiments.play:play",
    "solo-eval": "experiments.solo_eval:solo_eval",
    "eval": "experiments.evaluate:evaluate",
    "simulate": "experiments.simulate:simulate",
    "bench": "experiments.bench:bench",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """meeplelab: rules engines, agents and experiments for Cartographers, Cascadia and
    Dorfromantik."""


def main() -> None:
    """Console entry point: runs the CLI and turns project errors into one clear line."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except MeeplelabError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
