"""Rollout storage (T steps x N matches) and GAE per player along that player's own decisions.

Row (t, i) holds the decision made at step t in match i when the learner made it (`valid`); a frozen opponent's
decisions are not stored. Rewards and episode ends arrive through `SelfPlayVectorEnv`'s bookkeeping: each step's
`rewards[i, p]` belongs to p's latest decision, at step `infos["decision_step"][i, p]`, which may be an earlier row
(the opponent's reply decides what your last decision was worth). A player's decisions form a chain per match; GAE
runs backward along each chain, and a chain cut by the rollout's end bootstraps from V(p's view at the end).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads
from hollywood_gin_trainer.privileged import privileged_view_size

#: Fewest matches (columns) a thread's slice of the credit and GAE kernels gets: a few nanoseconds a row each.
ROLLOUT_GRAIN = 256


class RolloutStorage:
    """Preallocated numpy buffers of one rollout; its kernels run over slices of the matches on `threads` (default:
    the process's shared threads for its CPUs), with the same results for every count."""

    def __init__(
        self,
        steps: int,
        num_envs: int,
        obs_size: int,
        num_actions: int,
        stock_cards: int = 1,
        threads: KernelThreads | None = None,
    ) -> None:
        self.threads = kernel_threads() if threads is None else threads
        shape = (steps, num_envs)
        self.steps, self.num_envs = steps, num_envs
        self.obs = np.zeros((*shape, obs_size), dtype=np.float32)
        self.privileged = np.zeros((*shape, privileged_view_size(stock_cards)), dtype=np.float32)
        self.masks = np.zeros((*shape, num_actions), dtype=np.bool_)
        self.actions = np.zeros(shape, dtype=np.int64)
        self.logprobs = np.zeros(shape, dtype=np.float32)
        self.values = np.zeros(shape, dtype=np.float32)
        self.rewards = np.zeros(shape, dtype=np.float32)
        self.dones = np.zeros(shape, dtype=np.bool_)
        self.valid = np.zeros(shape, dtype=np.bool_)
        self.players = np.zeros(shape, dtype=np.int64)
        self.bootstrap = np.zeros((num_envs, 2), dtype=np.float32)
        self.first_step = 0

    def clear(self, first_step: int) -> None:
        """Start a rollout whose row 0 is the env's step `first_step`."""
        self.rewards[:] = 0.0
        self.dones[:] = False
        self.valid[:] = False
        self.first_step = first_step

    def credit(self, decision_step: np.ndarray, rewards: np.ndarray, terminations: np.ndarray) -> None:
        """Add a step's rewards[i, p] to p's latest decision row; mark it terminal where the episode ended."""
        decision_step = np.ascontiguousarray(decision_step, dtype=np.int64)
        rewards = np.asarray(rewards, dtype=np.float32)
        terminations = np.asarray(terminations, dtype=np.bool_)
        buffers = (self.rewards, self.dones, self.valid, self.players)

        def work(lo: int, hi: int) -> None:  # the buffers' columns lo..hi are the matches lo..hi
            columns = tuple(buffer[:, lo:hi] for buffer in buffers)
            credit_rows(*columns, self.first_step, decision_step[lo:hi], rewards[lo:hi], terminations[lo:hi])

        self.threads.run(self.num_envs, work, ROLLOUT_GRAIN)

    def advantages(self, gamma: float, lam: float) -> np.ndarray:
        """GAE of every valid row (0 elsewhere); returns are advantages + values."""
        out = np.zeros_like(self.values)
        buffers = (self.rewards, self.values, self.valid, self.players, self.dones)

        def work(lo: int, hi: int) -> None:  # the matches lo..hi: columns of the buffers, rows of bootstrap
            columns = tuple(buffer[:, lo:hi] for buffer in buffers)
            per_player_gae(*columns, self.bootstrap[lo:hi], gamma, lam, out[:, lo:hi])

        self.threads.run(self.num_envs, work, ROLLOUT_GRAIN)
        return out


@njit(cache=True, nogil=True)
def credit_rows(rew_buf, done_buf, valid, players, first_step, decision_step, rewards, terminations) -> None:
    """rew_buf[row, i] += rewards[i, p] for p's latest decision row in this rollout (learner rows only)."""
    steps = rew_buf.shape[0]
    for i in range(decision_step.shape[0]):
        for p in range(2):
            row = decision_step[i, p] - first_step
            if row < 0 or row >= steps or not valid[row, i] or players[row, i] != p:
                continue  # before this rollout, no decision yet (-1), or a frozen opponent's decision
            rew_buf[row, i] += rewards[i, p]
            if terminations[i]:
                done_buf[row, i] = True


@njit(cache=True, nogil=True)
def per_player_gae(rewards, values, valid, players, dones, bootstrap, gamma, lam, out) -> None:
    """Backward GAE along each (match, player) chain of valid rows; see the module docstring."""
    steps, n = rewards.shape
    next_value = np.zeros((n, 2), dtype=np.float64)
    next_adv = np.zeros((n, 2), dtype=np.float64)
    has_next = np.zeros((n, 2), dtype=np.bool_)
    for t in range(steps - 1, -1, -1):
        for i in range(n):
            if not valid[t, i]:
                continue
            p = players[t, i]
            if dones[t, i]:
                follow, successor, successor_adv = 0.0, 0.0, 0.0
            elif has_next[i, p]:
                follow, successor, successor_adv = 1.0, next_value[i, p], next_adv[i, p]
            else:  # the chain leaves the rollout: bootstrap from p's view at its end
                follow, successor, successor_adv = 1.0, float(bootstrap[i, p]), 0.0
            delta = rewards[t, i] + gamma * successor * follow - values[t, i]
            advantage = delta + gamma * lam * follow * successor_adv
            out[t, i] = advantage
            next_value[i, p] = values[t, i]
            next_adv[i, p] = advantage
            has_next[i, p] = True
