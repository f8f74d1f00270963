"""Cascadia (base game, wildlife scoring cards A) for 1-4 players.

``data`` loads ``seeds/cascadia.yaml``; ``kernels`` holds every rule as numba kernels (legal
actions, apply, scoring, score deltas, whole random games); ``game`` is the engine behind the
Game contract (``make_game("cascadia", players=...)``); ``env`` the Gymnasium and RLlib
environments; ``render`` text, pictures and observations; ``reference`` the plain-Python oracle.
The rules as implemented and the action codec: ``seeds/cascadia-rules.md``.
"""
