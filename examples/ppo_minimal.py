"""Masked PPO in one file (CleanRL style, torch only): solo Cartographers on the batched vector env.

    python examples/ppo_minimal.py [--total-timesteps 100000] [--num-envs 16] [--game cartographers]

For reading and teaching; ``meeplelab train`` is the RLlib path with the project's networks. The
env is ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``: N games stepped in one
numba call, with Gymnasium 1.x's next-step autoreset (the step after a game ends ignores the action,
starts the next game and pays 0), so those reset steps are left out of the loss. Illegal actions
get probability 0: their logits are masked before the softmax.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import envs  # noqa: F401  (registers the meeplelab/... environment ids)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="cartographers", help="cartographers, cascadia or dorfromantik (solo)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=100_000, help="env steps of all envs together")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--reward-scale", type=float, default=0.1, help="rewards (points) are multiplied by this")
    p.add_argument("--hidden", type=int, default=64, help="MLP width (the policy head is hidden x actions)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (1: the env and torch take turns on one core each step)")
    return p.parse_args()


def layer(inp: int, out: int, std: float = np.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(inp, out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """An MLP trunk with a policy head over every action and a value head."""

    def __init__(self, obs_size: int, num_actions: int, hidden: int):
        super().__init__()
        self.trunk = nn.Sequential(layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh())
        self.actor = layer(hidden, num_actions, std=0.01)
        self.critic = layer(hidden, 1, std=1.0)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.trunk(obs)).squeeze(-1)

    def act(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        """(action, log-prob, entropy, value); illegal actions (mask 0) get probability 0."""
        h = self.trunk(obs)
        logits = self.actor(h).masked_fill(mask == 0, -1e8)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(h).squeeze(-1)


def main() -> None:
    args = parse_args()
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_updates = max(1, args.total_timesteps // batch_size)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    env_id = f"meeplelab/{args.game.capitalize()}-v0"
    envs_ = gymnasium.make_vec(env_id, num_envs=args.num_envs, vectorization_mode="vector_entry_point")
    obs_size = envs_.single_observation_space["observations"].shape[0]
    num_actions = envs_.single_action_space.n
    agent = Agent(obs_size, num_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # rollout storage: one row per step, one column per env
    obs = torch.zeros((args.num_steps, args.num_envs, obs_size))
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    terms = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))
    valid = torch.zeros((args.num_steps, args.num_envs))  # 0: a reset step (action ignored, not learned)

    next_obs, _ = envs_.reset(seed=args.seed)
    resetting = np.zeros(args.num_envs, dtype=bool)  # the last step ended these games
    returns_now = np.zeros(args.num_envs)
    finished: list[float] = []
    global_step, illegal = 0, 0
    start, cpu_start = time.perf_counter(), time.process_time()

    for update in range(1, num_updates + 1):
        # ---- collect num_steps steps in every env with the current policy ----
        for step in range(args.num_steps):
            o = torch.from_numpy(next_obs["observations"])
            m = torch.from_numpy(next_obs["action_mask"])
            obs[step], masks[step], valid[step] = o, m, torch.from_numpy(~resetting).float()
            with torch.no_grad():
                action, logprob, _, value = agent.act(o, m)
            actions[step], logprobs[step], values[step] = action, logprob, value
            chosen = next_obs["action_mask"][np.arange(args.num_envs), action.numpy()]
            illegal += int(((chosen == 0) & ~resetting).sum())  # the env would also raise on one
            next_obs, reward, terminated, truncated, _ = envs_.step(action.numpy())
            global_step += args.num_envs
            rewards[step] = torch.from_numpy(reward * args.reward_scale).float()
            terms[step] = torch.from_numpy(terminated | truncated).float()
            returns_now += reward
            for i in np.flatnonzero(terminated | truncated):
                finished.append(float(returns_now[i]))
                returns_now[i] = 0.0
            resetting = terminated | truncated

        # ---- generalized advantage estimation; a game's end cuts the chain ----
        with torch.no_grad():
            next_value = agent.value(torch.from_numpy(next_obs["observations"]))
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                nextvalues = next_value if t == args.num_steps - 1 else values[t + 1]
                nonterminal = 1.0 - terms[t]
                delta = rewards[t] + args.gamma * nextvalues * nonterminal - values[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                advantages[t] = last
            returns = advantages + values

        # ---- PPO update on the valid steps (reset steps dropped) ----
        keep = valid.reshape(-1).bool()
        b_obs, b_masks = obs.reshape(-1, obs_size)[keep], masks.reshape(-1, num_actions)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_adv, b_returns = advantages.reshape(-1)[keep], returns.reshape(-1)[keep]
        b_values = values.reshape(-1)[keep]
        n = len(b_actions)
        for _ in range(args.update_epochs):
            order = torch.randperm(n)
            for lo in range(0, n, minibatch_size):
                mb = order[lo:lo + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.act(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(mb) > 1 else adv
                pg_loss = torch.max(-adv * ratio,
                                    -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_clipped = b_values[mb] + (newvalue - b_values[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2,
                                         (v_clipped - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        sps = global_step / (time.perf_counter() - start)
        recent = np.mean(finished[-20:]) if finished else float("nan")
        print(f"update {update}/{num_updates}: {global_step} env steps, {len(finished)} games, "
              f"mean score (last 20) {recent:.1f}, loss {loss.item():.3f}, {sps:,.0f} env steps/s")

    envs_.close()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"done: {global_step} env steps in {wall:.1f} s ({cpu:.1f} CPU s), {global_step / wall:,.0f} env "
          f"steps/s with learning, {len(finished)} games, illegal actions {illegal}")


if __name__ == "__main__":
    main()
