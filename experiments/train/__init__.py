"""Training: PPO on RLlib, imitation warm start, the self-play league, expert iteration."""
