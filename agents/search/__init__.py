"""Searches: the generic open-loop UCT tree (`mcts`), the compiled per-game searches and PUCT."""
