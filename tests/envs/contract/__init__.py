"""The Game contract (envs/core/game.py), checked on every registered game and seat count."""
