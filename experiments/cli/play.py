"""``meeplelab play GAME``: play one game with an agent in every seat and print it.

The position is printed at each of the game's milestones (a Cartographers season, ...) and the
score sheet at the end. Every game is reproducible from ``--seed``.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from agents.base import Agent, make_agent
from agents.explain import enable_explanations, take_explanation
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.registry import make_game
from envs.core.rng import numpy_generator
from envs.dorfromantik import campaign as campaign_log
from experiments.common.output_dir import prepare_out_dir
from experiments.replay.records import record_game, write_record


def play_one(game: Game, agents: list[Agent], seed: int, on_milestone=None,
             explanations: list | None = None) -> tuple[State, list[int]]:
    """Play a whole game; ``agents[i]`` plays seat i. Returns the final state and the actions.
    A list passed as ``explanations`` receives each decision's agent view (for a game record)."""
    if explanations is not None:
        enable_explanations(agents)
    rngs = [numpy_generator(seed, f"seat{i}") for i in range(game.num_players())]
    state = game.new_game(seed)
    actions: list[int] = []
    marker = game.progress_marker(state)
    while not game.is_over(state):
        seat = game.current_player(state)
        action = agents[seat].act(state, game.legal_mask(state), rngs[seat])
        if explanations is not None:
            explanations.append(take_explanation(agents[seat]))
        game.step(state, action)
        actions.append(int(action))
        new_marker = game.progress_marker(state)
        if on_milestone is not None and new_marker != marker:
            on_milestone(state, marker)
        marker = new_marker
    return state, actions


@click.command()
@click.argument("game_name", metavar="GAME")
@click.option("--agent", "agent_spec", default="random", show_default=True,
              help="Agent for every seat, e.g. random, greedy, mcts:simulations=200.")
@click.option("--agents", "agent_list", default=None, help="Comma-separated agents, one per seat.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--players", default=None, type=int, help="Number of players (game default if omitted).")
@click.option("--campaign", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dorfromantik: append the result to this campaign log.")
@click.option("--names", default=None,
              help="Comma-separated player names: printed for the seats and kept in the campaign log.")
@click.option("--quiet", is_flag=True, help="Only the final position and score sheet.")
@click.option("--record", "record_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the game record (JSON lines; watch it with meeplelab replay) to this file.")
def play(game_name: str, agent_spec: str, agent_list: str | None, seed: int, players: int | None,
         campaign: Path | None, names: str | None, quiet: bool, record_file: Path | None) -> None:
    """Play one game of GAME and print the position and the score sheet."""
    if seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    options = {} if players is None else {"players": players}
    game = make_game(game_name, **options)
    specs = agent_list.split(",") if agent_list else [agent_spec] * game.num_players()
    if len(specs) != game.num_players():
        raise click.BadParameter(f"{len(specs)} agents for {game.num_players()} seats", param_hint="--agents")
    agents = [make_agent(spec, game) for spec in specs]  # a bad spec fails before anything is played
    seat_names = check_campaign(game, campaign, names)
    if record_file is not None:
        prepare_out_dir(record_file.parent, "--record")  # a bad folder fails now, not after the game

    def named(text: str) -> str:
        """The seats as ``--names`` calls them (the engines print player_0, player_1, ...)."""
        if not names:
            return text
        return re.sub(r"\bplayer_(\d+)\b", lambda m: seat_names[int(m.group(1))], text)

    def show(state: State, marker) -> None:
        if not quiet and not game.is_over(state):  # the final position is printed below
            click.echo(f"\n=== {game.name}: end of {marker_label(game, marker)} ===")
            click.echo(named(game.render_ansi(state)))

    explanations: list | None = [] if record_file is not None else None
    state, actions = play_one(game, agents, seed, on_milestone=show, explanations=explanations)
    click.echo(f"\n=== {game.name}: final position (seed {seed}, {len(actions)} decisions) ===")
    click.echo(named(game.render_ansi(state)))
    click.echo("\n" + named(game.score_sheet_text(state)))
    if record_file is not None:
        write_record(record_game(game.name, options, seed, specs, actions, explanations), record_file)
        click.echo(f"\nwrote the game record {record_file}")
    if campaign is not None:
        campaign_log.append_result(campaign, game.campaign_record(state, seat_names))
        click.echo(f"\nappended to campaign log {campaign}")


def check_campaign(game: Game, campaign: Path | None, names: str | None) -> list[str]:
    """Validate ``--names`` and ``--campaign`` before the game is played: one name per seat, and for a
    campaign, the game keeps a log, the log's folder is writable and the existing log reads cleanly.
    Returns the seat names (ConfigError/DataFileError otherwise, so no played game is lost)."""
    seat_names = names.split(",") if names else [f"player_{i}" for i in range(game.num_players())]
    if len(seat_names) != game.num_players() or not all(n.strip() for n in seat_names):
        raise ConfigError(f"--names: {len(seat_names)} names for {game.num_players()} seats "
                          "(give one non-empty name per seat, comma-separated)")
    if campaign is None:
        return seat_names
    if not hasattr(game, "campaign_record"):
        raise ConfigError(f"--campaign: {game.name} keeps no campaign log (only dorfromantik does)")
    prepare_out_dir(campaign.parent, "--campaign")
    if campaign.exists() and not campaign.is_file():
        raise ConfigError(f"--campaign {campaign} is a folder, not a log file")
    campaign_log.read_log(campaign)  # a damaged log is reported now, not after the game
    return seat_names


def marker_label(game: Game, marker) -> str:
    """A readable name for a progress marker (seasons for Cartographers)."""
    label = getattr(game, "milestone_name", None)
    return label(marker) if callable(label) else f"stage {marker}"
