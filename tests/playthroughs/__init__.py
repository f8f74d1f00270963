"""OpenSpiel-style playthroughs: whole games written out decision by decision (see generate.py)."""
