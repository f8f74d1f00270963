"""``meeplelab play GAME``: play one game with an agent in every seat and print it.

The position is printed at each of the game's milestones (a Cartographers season, ...) and the
score sheet at the end. Every game is reproducible from ``--seed``.
"""

from __future__ import annotations

from pathlib import Path

import click

from agents.base import make_agent
from envs.core.game import Game, State
from envs.core.registry import make_game
from envs.core.rng import numpy_generator


def play_one(game: Game, agent_specs: list[str], seed: int,
             on_milestone=None) -> tuple[State, list[int]]:
    """Play a whole game; ``agent_specs[i]`` plays seat i. Returns the final state and the actions."""
    agents = [make_agent(spec, game) for spec in agent_specs]
    rngs = [numpy_generator(seed, f"seat{i}") for i in range(game.num_players())]
    state = game.new_game(seed)
    actions: list[int] = []
    marker = game.progress_marker(state)
    while not game.is_over(state):
        seat = game.current_player(state)
        action = agents[seat].act(state, game.legal_mask(state), rngs[seat])
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
@click.option("--names", default=None, help="Comma-separated player names for the campaign log.")
@click.option("--quiet", is_flag=True, help="Only the final position and score sheet.")
def play(game_name: str, agent_spec: str, agent_list: str | None, seed: int, players: int | None,
         campaign: Path | None, names: str | None, quiet: bool) -> None:
    """Play one game of GAME and print the position and the score sheet."""
    options = {} if players is None else {"players": players}
    game = make_game(game_name, **options)
    specs = agent_list.split(",") if agent_list else [agent_spec] * game.num_players()
    if len(specs) != game.num_players():
        raise click.BadParameter(f"{len(specs)} agents for {game.num_players()} seats", param_hint="--agents")

    def show(state: State, marker) -> None:
        if not quiet and not game.is_over(state):  # the final position is printed below
            click.echo(f"\n=== {game.name}: end of {marker_label(game, marker)} ===")
            click.echo(game.render_ansi(state))

    state, actions = play_one(game, specs, seed, on_milestone=show)
    click.echo(f"\n=== {game.name}: final position (seed {seed}, {len(actions)} decisions) ===")
    click.echo(game.render_ansi(state))
    click.echo("\n" + game.score_sheet_text(state))
    if campaign is not None:
        if not hasattr(game, "campaign_record"):
            raise click.BadParameter(f"{game.name} keeps no campaign log", param_hint="--campaign")
        from envs.dorfromantik import campaign as campaign_log

        seat_names = names.split(",") if names else [f"player_{i}" for i in range(game.num_players())]
        if len(seat_names) != game.num_players():
            raise click.BadParameter(f"{len(seat_names)} names for {game.num_players()} seats",
                                     param_hint="--names")
        campaign_log.append_result(campaign, game.campaign_record(state, seat_names))
        click.echo(f"\nappended to campaign log {campaign}")


def marker_label(game: Game, marker) -> str:
    """A readable name for a progress marker (seasons for Cartographers)."""
    label = getattr(game, "milestone_name", None)
    return label(marker) if callable(label) else f"stage {marker}"
