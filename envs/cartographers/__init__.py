"""Cartographers (Thunderworks Games, 2019), base game, 1-6 players and solo.

Modules: ``data`` (component tables from ``seeds/cartographers.yaml``), ``kernels`` (numba:
footprints, masks, the 16 scoring cards, the whole turn flow and the compiled random loops),
``game`` (:class:`~envs.cartographers.game.CartographersGame`, the Game contract), ``render``,
``env`` (Gymnasium) and ``reference`` (the plain-Python oracle). Nothing is imported here, so
``import envs.cartographers.reference`` does not load numba. Rules notes and the action codec:
``seeds/cartographers-rules.md``.
"""
