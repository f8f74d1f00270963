"""Game records and the self-contained HTML replay viewer."""
