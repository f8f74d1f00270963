"""Gymnasium and RLlib environments of Cascadia (``meeplelab/Cascadia-v0``)."""

from __future__ import annotations

from typing import Any

from envs.core.gym_env import GameEnv, split_env_options
from envs.core.lazy import lazy_attributes
from envs.core.registry import make_game


class CascadiaEnv(GameEnv):
    """Cascadia (base game, wildlife scoring cards A), solo by default.

    ## Description

    Each turn the player takes one habitat tile and one wildlife token from a market of four
    pairs, places the tile touching its area and the token on a matching empty hex (or returns
    it). After 20 turns the five wildlife patterns, the largest corridor per habitat, the
    majority (or solo) habitat bonuses and the unused nature tokens score. The rules are seed
    003 with the project's decisions (``seeds/cascadia-rules.md``). ``players=1`` plays the solo
    variant (the market discards the pair farthest from the stack every turn); with more players
    the other seats are played by ``opponent`` agents.

    ## Action Space

    ``Discrete(10670)``. A turn is a sequence of decisions in this one space:

    - market phase: ``0..3`` take pair ``i``; ``4 + 4*i + j`` pay a nature token for tile ``i``
      and token ``j``; ``19 + s`` pay a nature token to redraw the token slots of bitmask ``s``
      (1..15); ``35`` the free redraw of three identical tokens (once, at the start of a turn).
      Nature-token actions may repeat; a take ends the phase;
    - tile phase: ``36 + 6*c + k`` place the tile at window cell ``c`` with rotation ``k``
      (keystone tiles: ``k = 0`` only, all rotations look alike);
    - token phase: ``9150 + c`` put the token on cell ``c``; ``10669`` return it to the bag.

    Cells number the hexes within distance 22 of the starter keystone (``data.CELL_COORDS``),
    which holds every position a legal game can reach. ``game.decode_action(a)`` and
    ``CascadiaGame.encode_action(...)`` convert.

    ## Observation Space

    ``Dict(observations=Box(0, 10, (36589,), float32), action_mask=Box(0, 1, (10670,),
    float32))``. ``observations``: 24 planes over the 1519 window cells of the learner's area
    (occupied, habitats shown, edge habitats, token one-hot, animals allowed, keystone,
    frontier), then the market (4 tiles x 11, 4 tokens x 5), the tile and token in hand, bag
    counts, own nature tokens, supply, phase, redraw flags, own turns, stack left, player count,
    whose turn, and per other seat nature tokens, corridor sizes and wildlife scores.

    ## Rewards

    The change of the learner's total score (majority bonuses included) over the step and the
    opponents' replies: the sum over an episode is the final score.

    ## Episode End

    Terminated when the market cannot be refilled after a turn (each seat has played exactly 20
    turns). Never truncated.

    ## Information

    ``info["action_mask"]``, ``info["score"]`` (total; bear, elk, salmon, hawk, fox; corridor_*
    and bonus_* per habitat; nature_tokens; base = total without majority bonuses, wildlife,
    habitat, bonus), ``info["player"]``.

    ## Arguments

    ``gymnasium.make("meeplelab/Cascadia-v0", players=1, opponent="random", render_mode=None,
    seat=0, illegal_action="raise", illegal_penalty=-1.0, reward="score", second_place_tie="zero")``.
    ``reward``: "score", "margin" or "win" (:mod:`envs.core.rewards`; solo "win" pays 0).
    ``render_mode``: "ansi" or "rgb_array". RLlib may pass one ``env_config`` dict first.

    ## Version History

    * v0: initial version (base game, cards A, 1-4 players).
    """

    def __init__(self, players: int | dict = 1, opponent: str | dict = "random",
                 render_mode: str | None = None, **game_options: Any):
        options, env_kwargs = split_env_options(
            players, game_options, {"players": 1, "opponent": opponent, "render_mode": render_mode})
        game = make_game("cascadia", **options)
        super().__init__(game, **env_kwargs)


MULTIAGENT_DOC = """Cascadia for RLlib self-play: agents ``player_0..``, turn-based.

Only the acting agent observes; its reward is its own score change since its previous
observation. Spaces, observation and action codec are those of :class:`CascadiaEnv`.

Arguments (keywords, or one RLlib ``env_config`` dict): ``players`` (default 2),
``shared_reward``, ``reward`` ("score"/"margin"/"win"), ``illegal_action`` ("raise"/"penalize"),
``illegal_penalty``, ``render_mode``, ``second_place_tie``.
"""


def _build_multiagent_class() -> type:
    """Defined on first use so that importing the single-agent env does not import Ray."""
    from envs.core.multiagent_env import seat_env_class

    return seat_env_class("cascadia", __name__, "CascadiaMultiAgentEnv", MULTIAGENT_DOC)


__getattr__ = lazy_attributes(globals(), {"CascadiaMultiAgentEnv": _build_multiagent_class})
