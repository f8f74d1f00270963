"""``meeplelab``: the command-line front. Each verb lives in its own module and is imported
only when used, so ``meeplelab --help`` is instant and a broken optional piece never blocks
the others."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from envs.core.errors import MeeplelabError
from experiments.common.writes import disk_full_error, is_disk_full

#: verb -> "module:click_command"
COMMANDS: dict[str, str] = {
    "play": "experiments.cli.play:play",
    "average-models": "experiments.cli.average_models:average_models_command",
    "solo-eval": "experiments.eval.solo_eval:solo_eval",
    "eval": "experiments.eval.evaluate:evaluate",
    "simulate": "experiments.sim.simulate:simulate",
    "bench": "experiments.bench.command:bench",
    "ladder": "experiments.eval.ladder:ladder",
    "tune-greedy": "experiments.eval.tune_greedy:tune_greedy",
    "decision-time": "experiments.eval.decision_time:decision_time",
    "replay": "experiments.replay.html:replay_command",
    "train": "experiments.train.cli:train",
    "exit-report": "experiments.train.exit_report:exit_report",
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


def run(args: Sequence[str] | None = None) -> int:
    """Run the CLI on ``args`` (default: the process arguments) and return the exit code; project
    errors become one clear line on stderr and exit code 2 (tests call this to check that)."""
    try:
        result = cli.main(args=list(args) if args is not None else None, standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except MeeplelabError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    except OSError as exc:  # a full disk outside the write helpers (a library's own write): one line too
        if not is_disk_full(exc):
            raise
        click.echo(f"error: {disk_full_error(exc.filename or 'results', exc)}", err=True)
        return 2
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console entry point: runs the CLI and turns project errors into one clear line."""
    sys.exit(run())


if __name__ == "__main__":
    main()
