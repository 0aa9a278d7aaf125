"""`HollywoodGinVectorEnv`: N matches of "HollywoodGin-v1" in one batched engine (a true `VectorEnv`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hollywood_gin_env.display.render import render_match
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.game import position_of
from hollywood_gin_env.envs.learner import LearnerMatches, deal_options
from hollywood_gin_env.envs.spaces import observation_space
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.streams import draw_root_seed, match_seeds


class HollywoodGinVectorEnv(VectorEnv):
    """
    N independent "HollywoodGin-v1" episodes run by one batched engine: no Python loop over matches.

    Made by `gymnasium.make_vec("HollywoodGin-v1", num_envs=N, vectorization_mode="vector_entry_point",
    **kwargs)`, with the arguments, spaces, rewards and episode ends of `HollywoodGinEnv` (see its
    docstring). The opponent is asked for the actions of all matches where it is to act at once.

    ## Autoreset
    `metadata["autoreset_mode"] = AutoresetMode.SAME_STEP`: when match i's episode ends in a step,
    `terminations[i]` is True, `infos["final_obs"][i]` and `infos["final_info"]` hold its last
    observation and info (masks `infos["_final_obs"]`, `infos["_final_info"]`), and the returned
    observation is already the first of the next episode, so every returned action mask is one the
    agent can sample from. The layout is that of `gymnasium.vector.SyncVectorEnv(...,
    autoreset_mode=AutoresetMode.SAME_STEP)`, which this env equals step for step.

    ## Seeding
    `reset(seed=s)` seeds match i with s + i (a list seeds each match), exactly as a single env reset
    with seed s + i; autoresets continue each match's streams as a single env's `reset()` does.
    `options={"deck": one deck or N decks (None rows shuffled), "first_dealer": 0, 1 or N of them}`.

    ## Threads
    `num_threads` (default: every CPU this process may use but one, at least one; 1..1024) runs the
    engine, the encoder and an opponent given by name over slices of the matches on that many threads of
    this process (hollywood_gin_env/engine/threads.py). Each match keeps its own random streams, so every thread
    count gives the same observations, rewards and actions. An opponent given by spec acts on `torch_threads`
    torch threads (default: the programs' choice, one).

    ## Information
    `infos["action_mask"]`, `infos["illegal_action"]`, `infos["learner_seat"]` (each with its `_key`
    mask). An illegal action ends its episode, so `illegal_action` shows in `infos["final_info"]`.

    ## Version History
    * v0: Initial version (564 observation features).
    * v1: The observation gains the "take_effect" block (what taking the face-up card would do to the
      hand, from the exact meld solver): 567 features. `num_threads=` added later (same results).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4, "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        opponent: Any = "random",
        rules: Rules | None = None,
        reward: str = "hand",
        episode: str = "match",
        learner_seat: int | None = None,
        illegal_action: str = "end",
        render_mode: str | None = None,
        num_threads: int | None = None,
        torch_threads: int | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not allowed: use 'ansi' or None")
        self.num_envs = num_envs
        self._matches = LearnerMatches(
            num_envs, rules, opponent, reward, episode, learner_seat, illegal_action, num_threads, torch_threads
        )
        self.num_threads = self._matches.engine.threads.num_threads
        self.rules = self._matches.rules
        self.render_mode = render_mode
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._all = np.ones(num_envs, dtype=np.bool_)
        self._seeded = False

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new episode in every match (see the class docstring for seeds and options)."""
        if seed is not None:
            match_seeds(seed, self.num_envs)  # a bad seed is refused before np_random is reseeded
        super().reset(seed=seed if isinstance(seed, int) else None)
        decks, dealers = deal_options(options, self.num_envs)
        seeds = None
        if seed is not None or not self._seeded:
            seeds = match_seeds(seed if seed is not None else draw_root_seed(self.np_random), self.num_envs)
            self._seeded = True
        self._matches.new_outputs()
        self._matches.reset(self._all, seeds, decks, dealers)
        return self._observations(), self._infos()

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner action per match; the opponent replies; ended episodes restart at once (SAME_STEP).

        actions: an integer array of shape (num_envs,) (or a list of ints); other dtypes (floats, bools,
        strings) raise TypeError and other shapes ValueError, naming what was received. After a step that
        the opponent interrupted, every step raises `gymnasium.error.ResetNeeded` until `reset()`.
        """
        matches = self._matches
        matches.step(actions)
        rewards = matches.rewards.astype(np.float32)
        terminations = matches.ended.copy()
        infos: dict[str, Any] = {}
        if terminations.any():
            infos = self._final_infos(terminations)
            matches.reset(terminations)
        infos.update(self._infos())
        return self._observations(), rewards, terminations, np.zeros(self.num_envs, dtype=np.bool_), infos

    def action_masks(self) -> np.ndarray:
        """bool[N, 107]: each match's legal actions now."""
        return self._matches.mask.astype(np.bool_)

    def render(self) -> list[str] | None:
        """One text per match in "ansi" mode (both hands, the pile, the sheet); None otherwise."""
        if self.render_mode != "ansi":
            return None
        engine, seats = self._matches.engine, self._matches.seats
        return [render_match(position_of(engine, i), int(seats[i])) for i in range(self.num_envs)]

    @property
    def engine(self) -> Engine:
        """The underlying batched `Engine` (read it; do not step it)."""
        return self._matches.engine

    def _observations(self) -> dict[str, np.ndarray]:
        return {"observation": self._matches.obs, "action_mask": self._matches.mask}  # fresh arrays every step

    def _infos(self) -> dict[str, Any]:
        n, everywhere = self.num_envs, np.ones(self.num_envs, dtype=np.bool_)
        return {
            "action_mask": self._matches.mask.copy(),
            "_action_mask": everywhere,
            "illegal_action": np.zeros(n, dtype=np.bool_),
            "_illegal_action": everywhere.copy(),
            "learner_seat": self._matches.seats.copy(),
            "_learner_seat": everywhere.copy(),
        }

    def _final_infos(self, ended: np.ndarray) -> dict[str, Any]:
        """final_obs (an object array of per-match observations) and final_info, as SyncVectorEnv lays them out."""
        matches, rows = self._matches, np.flatnonzero(ended)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in rows:
            final_obs[i] = {"observation": matches.obs[i].copy(), "action_mask": matches.mask[i].copy()}
        mask = np.where(ended[:, None], matches.mask, 0).astype(np.int8)
        final_info = {
            "action_mask": mask,
            "_action_mask": ended.copy(),
            "illegal_action": matches.illegal & ended,
            "_illegal_action": ended.copy(),
            "learner_seat": np.where(ended, matches.seats, 0),
            "_learner_seat": ended.copy(),
        }
        return {
            "final_obs": final_obs,
            "_final_obs": ended.copy(),
            "final_info": final_info,
            "_final_info": ended.copy(),
        }
