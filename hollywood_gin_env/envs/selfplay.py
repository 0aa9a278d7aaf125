"""`SelfPlayVectorEnv`: N two-player matches in one batched engine, for self-play trainers.

Every step is one decision, made by the player to act in each match; both players' rewards come
back each step with the bookkeeping that says which decision each reward belongs to. docs/ENVIRONMENTS.md,
"Self-play for trainers", describes how PPO uses it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine, as_players
from hollywood_gin_env.engine.handstats import ended_hands
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_rows
from hollywood_gin_env.engine.state_check import check_counters, check_engine_state
from hollywood_gin_env.envs import batch
from hollywood_gin_env.envs.learner import deal_options
from hollywood_gin_env.envs.spaces import check_num_envs, env_rules, observation_space
from hollywood_gin_env.rules.actions import NUM_ACTIONS, as_actions, illegal_action_message
from hollywood_gin_env.rules.options import Rules, check_choice
from hollywood_gin_env.support.streams import draw_root_seed, match_seeds


class SelfPlayVectorEnv:
    """
    N Hollywood Gin matches where the caller plays both seats.

    ## Steps
    `reset(seed=None, options=None) -> (obs, infos)`; `step(actions int[N]) -> (obs, rewards float32[N, 2],
    terminations bool[N], truncations bool[N], infos)`. `obs` is {"observation": float32[N, 567],
    "action_mask": int8[N, 107]} of the player to act in each match (`infos["current_player"]`); the
    action of `step` is that player's. Illegal actions raise ValueError naming the value and the legal
    ones, state unchanged (sample with the mask); actions that are no integer array of shape (N,) raise
    TypeError or ValueError, as in the VectorEnv.

    ## Rewards
    `rewards[i, p]` is player p's reward from step i's events, in the mode of `reward` ("hand":
    ±points/100 per hand, "game": ±1 per Hollywood game closed, "match": ±1 at the series end, "chance": 2 x the
    hand's change in the chance to win the match);
    `rewards[:, 0] == -rewards[:, 1]`. It belongs to player p's latest decision in the episode, whose
    step index is `infos["decision_step"][i, p]` (-1: p has not decided yet in this episode, as when
    the opponent knocks on the hand's first turn; no decision earned it).

    ## Episodes and autoreset
    `episode="match"` (default): an episode is a match; `episode="hand"`: a hand, and the next episode
    goes on with the same match (the sheet carries over) until the match is over. When episode i
    ends, `terminations[i]` is True and the returned observation is already the next episode's first
    (SAME_STEP autoreset); `infos["decision_step"]` of that step still refers to the ended episode.

    ## Information
    `current_player` int64[N] (to act in the returned obs), `acting_player` int64[N] (whose action was
    applied), `decision_step` int64[N, 2], `step` (the index of this step: steps count from 0 after
    `reset`), `match_winner` int64[N] (the series winner where the match ended this step, else -1), and
    the hand that the step ended, if any (a match's last hand included): `hand_over` bool[N], `hand_kind`
    int64[N] (scoring.KIND_*, -1 where no hand ended), `hand_knocker` and `hand_winner` int64[N] (-1: none,
    as in a dead hand), `hand_points` int64[N] (what the winner scored) and `hand_turns` int64[N] (its draws).
    `hollywood_gin_env.engine.handstats` turns these into the rates the trainer and the evaluator report.
    `observe(players)` encodes any player's observation, e.g. the waiting player's for a value bootstrap.

    ## Arguments
    `num_envs`: 1..MAX_NUM_ENVS (65,536; envs/spaces.py says why). `rules`: a `Rules`, a preset's name or a
    dict (`Rules.from_spec`). `reward` and `episode` as above.

    ## Threads
    `num_threads` (default: every CPU this process may use but one, at least one; 1..1024) runs the engine and the
    encoder over slices of the matches on that many threads (hollywood_gin_env/engine/threads.py); `threads` are
    those threads, for the caller's own per-match kernels. Every thread count gives the same steps.

    ## Engine
    `engine` is the batched `Engine` the matches run in (read it; do not step it).
    """

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | dict | None = None,
        reward: str = "hand",
        episode: str = "match",
        num_threads: int | None = None,
    ) -> None:
        check_choice("reward", reward, batch.REWARD_MODES)
        check_choice("episode", episode, batch.EPISODE_MODES)
        self.num_envs = n = check_num_envs(num_envs)
        self._engine = Engine(n, env_rules(rules), num_threads)
        self.threads = self._engine.threads
        self.rules = self._engine.rules
        self.mode = batch.REWARD_MODES.index(reward)
        self.hand_episodes = episode == "hand"
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.np_random = np.random.default_rng()
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self._players = np.zeros(n, dtype=np.int64)
        self._seat0 = np.zeros(n, dtype=np.int64)
        self._r0 = np.zeros(n, dtype=np.float64)
        self._ended = np.zeros(n, dtype=np.bool_)
        self._illegal = np.zeros(n, dtype=np.bool_)
        self._all = np.ones(n, dtype=np.bool_)
        self._decision_step = np.full((n, 2), -1, dtype=np.int64)
        self._rows = np.arange(n)
        self._step = 0
        self._seeded = False

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """New matches everywhere; match i is seeded with seed + i, and `reset()` continues every match's stream."""
        decks, dealers = deal_options(options, self.num_envs)
        seeds = None
        if seed is not None or not self._seeded:
            seeds = match_seeds(seed if seed is not None else draw_root_seed(self.np_random), self.num_envs)
            self._seeded = True
        self.engine.new_matches(seeds=seeds, first_dealers=dealers, decks=decks)
        self._decision_step[:] = -1
        self._step = 0
        self._encode()
        return self._observations(), {"current_player": self._players.copy()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply the action of the player to act in every match (see the class docstring)."""
        passed, actions = actions, as_actions(actions, self.num_envs)
        if batch.mark_illegal(actions, self.engine.legal_mask, self._all, self._illegal):
            i = int(np.flatnonzero(self._illegal)[0])
            value = np.asarray(passed).reshape(-1)[i]
            raise ValueError(illegal_action_message(value, self.engine.legal_mask[i], f" in match {i}"))
        acting = self._players.copy()
        self._decision_step[self._rows, acting] = self._step
        self.engine.step(actions)
        self._r0[:] = 0.0
        self._ended[:] = False
        s = self.engine.state
        batch.credit_rows(self.engine, self._seat0, self._all, self.mode, self.hand_episodes, self._r0, self._ended)
        rewards = np.stack([self._r0, -self._r0], axis=1).astype(np.float32)
        terminations = self._ended.copy()
        done_now = self.engine.done_now
        infos = {
            "acting_player": acting,
            "decision_step": self._decision_step.copy(),
            "step": self._step,
            "match_winner": np.where(done_now, s.match[:, col.M_WINNER], -1),
            **ended_hands(s),
        }
        if terminations.any():
            self._decision_step[terminations] = -1
            if done_now.any():
                self.engine.new_matches(selected=done_now)
        self._step += 1
        self._encode()
        infos["current_player"] = self._players.copy()
        return self._observations(), rewards, terminations, np.zeros(self.num_envs, dtype=np.bool_), infos

    def observe(self, players: np.ndarray) -> dict[str, np.ndarray]:
        """players[i]'s observation of match i now (the mask is zero where that player is not to act)."""
        players = as_players(players, self.num_envs)
        obs = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        encode_rows(self.threads, players, self._all, self.engine.arrays, self.engine.params, obs, mask)
        return {"observation": obs, "action_mask": mask}

    @property
    def engine(self) -> Engine:
        """The batched `Engine` of the matches (read it; do not step it)."""
        return self._engine

    @property
    def current_player(self) -> np.ndarray:
        """int64[N]: the player to act in each match (as `infos["current_player"]`)."""
        return self._players.copy()

    @property
    def next_step(self) -> int:
        """The index the next `step` will have (`infos["step"]` of that step)."""
        return self._step

    def state_dict(self) -> dict[str, Any]:
        """Copies of everything that continues these matches exactly: the engine's arrays and the env's counters."""
        arrays = {name: array.copy() for name, array in self.engine.state._asdict().items()}
        return {"engine": arrays, "decision_step": self._decision_step.copy(), "step": self._step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from what `state_dict` returned (for N matches under the same rules).

        Everything is checked first (state_check.py): a state that is not one the engine can be in raises
        ValueError naming the field, and leaves this env as it was.
        """
        if not isinstance(state, dict) or not {"engine", "decision_step", "step"} <= set(state):
            raise ValueError("an env state is a dict with keys 'engine', 'decision_step' and 'step'")
        engine = check_engine_state(state["engine"], self.num_envs, self.engine.params)
        decision_step, step = check_counters(state["decision_step"], state["step"], self.num_envs)
        for source, target in zip(engine, self.engine.state, strict=True):
            target[...] = source
        self._decision_step[:] = decision_step
        self._step, self._seeded = step, True
        self._encode()

    def action_masks(self) -> np.ndarray:
        """bool[N, 107]: the legal actions of each match's player to act."""
        return self._mask.astype(np.bool_)

    def close(self) -> None:
        """Nothing to release (kept for the VectorEnv-like interface)."""

    def _encode(self) -> None:
        np.copyto(self._players, self.engine.current_player)
        engine = self.engine
        encode_rows(self.threads, self._players, self._all, engine.arrays, engine.params, self._obs, self._mask)

    def _observations(self) -> dict[str, np.ndarray]:
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}
