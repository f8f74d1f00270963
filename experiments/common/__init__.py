"""What every experiment command shares: the game runner, Ray start-up and options, output folders."""
