"""Simulation: `simulate` on Ray, its compiled whole-chunk loops, chunk files and summaries."""
