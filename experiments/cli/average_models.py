"""``meeplelab average-models MODEL MODEL [...] --out FOLDER``: one learned model from several.

The weights and pattern tables of the given ``learned:`` model folders are averaged entry by entry
(:mod:`agents.learned.average`), so the new model values every candidate at the (weighted) mean of
their values; it plays as ``learned:FOLDER``. Its ``model.json`` records each source and its training.
"""

from __future__ import annotations

from pathlib import Path

import click

from agents.learned.agent import resolve_model_path
from agents.learned.average import average_models, parse_weights, save_average
from agents.learned.model import MODEL_FILE
from envs.core.errors import ConfigError
from experiments.common.output_dir import prepare_out_dir


@click.command("average-models")
@click.argument("models", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="folder to write the averaged model to (model.json and, with tables, patterns.npy)")
@click.option("--weights", default=None,
              help="comma-separated weight per model, in order (default: equal); normalised to sum 1")
@click.option("--force", is_flag=True, help="replace a model already in --out")
def average_models_command(models: tuple[str, ...], out: Path, weights: str | None, force: bool) -> None:
    """Average learned model folders (the same game, setting, features and table shape) into --out."""
    paths = [resolve_model_path(model) for model in models]
    mix = parse_weights(weights, len(paths))
    if (out / MODEL_FILE).exists() and not force:
        raise ConfigError(f"--out {out} already holds a model (pass --force to replace it)")
    model = average_models(paths, mix)  # every check before anything is written
    prepare_out_dir(out)
    written = save_average(model, out)
    shares = ", ".join(f"{path} x {w:.3g}" for path, w in zip(paths, mix, strict=True))
    click.echo(f"wrote {written}: the mean of {shares}")
