"""Dorfromantik: The Board Game (first campaign game): rules engine, kernels, environment."""
