"""PettingZoo AEC env of a Hollywood Gin match (optional extra `[pettingzoo]`).

    from hollywood_gin_env.envs.pettingzoo import env
    aec = env(reward="hand")
    aec.reset(seed=0)
    for agent in aec.agent_iter():
        observation, reward, termination, truncation, info = aec.last()
        mask = observation["action_mask"]
        action = None if termination or truncation else int(np.flatnonzero(mask)[0])
        aec.step(action)

The classic convention: `observe(agent)` is {"observation": float32[567], "action_mask": int8[107]}
(the mask is zero unless the agent is to act). Agents "player_0" and "player_1" are seats 0 and 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.support.messages import install_hint

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import BaseWrapper, wrappers
except ModuleNotFoundError as error:  # one line saying what to install, as every other extra does
    raise ModuleNotFoundError(
        f"hollywood_gin_env.envs.pettingzoo needs the [pettingzoo] extra ({error}): {install_hint('pettingzoo')}",
        name=error.name,
    ) from None

from hollywood_gin_env.display.render import render_match
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.game import position_of
from hollywood_gin_env.engine.observation import encode_one
from hollywood_gin_env.envs import batch
from hollywood_gin_env.envs.learner import deal_options
from hollywood_gin_env.envs.outcomes import NO_OUTCOME, outcome_table, outcome_values
from hollywood_gin_env.envs.spaces import env_rules, observation_space, worst_reward
from hollywood_gin_env.rules.actions import NUM_ACTIONS, as_action, illegal_action_message
from hollywood_gin_env.rules.options import Rules, check_choice
from hollywood_gin_env.support.streams import draw_root_seed, match_seeds


def env(
    rules: Rules | str | dict | None = None,
    reward: str = "hand",
    episode: str = "match",
    render_mode: str | None = None,
) -> AECEnv:
    """The AEC env with PettingZoo's classic wrappers: an illegal action ends the episode at the mode's worst reward.

    An action outside the action space (-1, 107) or no integer (1.0, True) raises as the raw env does, in place of
    PettingZoo's AssertOutOfBoundsWrapper (an assert, gone under `python -O`).
    """
    aec = raw_env(rules=rules, reward=reward, episode=episode, render_mode=render_mode)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=worst_reward(aec.rules, reward))
    aec = CheckActionWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


class CheckActionWrapper(BaseWrapper):
    """Refuses an action that is no action id before the wrappers inside it read it (as an index into the mask).

    TypeError for anything but an integer (`rules.actions.as_action`), ValueError naming the legal actions for an
    integer outside 0..106: what the raw env and the single env (`illegal_action="raise"`) raise.
    """

    def step(self, action: Any) -> None:
        """Check the selected agent's action, then step (a terminated agent's None passes as PettingZoo wants)."""
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            value = as_action(action)
            if not 0 <= value < NUM_ACTIONS:
                legal = self.env.observe(agent)["action_mask"]
                raise ValueError(illegal_action_message(value, legal, f" for {agent}"))
            action = value
        super().step(action)


class raw_env(AECEnv):  # noqa: N801  (PettingZoo's naming convention)
    """
    Hollywood Gin for two agents, one match (a Hollywood series, docs/RULES.md) or one hand per episode.

    Actions `Discrete(107)` and observations as in `HollywoodGinEnv`. Rewards are zero-sum in the mode
    of `reward`: "hand" (±points/100 for each hand), "game" (±1 for each Hollywood game closed),
    "match" (±1 at the end of the series) or "chance" (2 x each hand's change in the chance to win the
    match). `episode="match"`: the episode terminates for both agents when the match is over;
    `episode="hand"`: when a hand ends (knock, gin or dead hand), and `reset()` then goes on with the
    same match's next hand (the sheet carries over) until the match is over, as `HollywoodGinEnv`'s
    hand episodes. There is no truncation. `reset(seed=k)` seeds the deals (as `Game(seed=k)`) and
    starts a new match; `reset()` continues the stream; `options={"deck": [...], "first_dealer": 0 or 1}`
    fixes the first deal of a new match. `rules`: a `Rules`, a preset's name or a dict (`Rules.from_spec`).

    `infos[agent]` holds the outcome of the last step (docs/ENVIRONMENTS.md, "Infos"): the hand it
    ended and the match winner as seats, and `hand_result` and `match_result` from that agent's side.
    """

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "hollywood_gin_v1",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        rules: Rules | str | dict | None = None,
        reward: str = "hand",
        episode: str = "match",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        rules = env_rules(rules)
        check_choice("reward", reward, batch.REWARD_MODES)
        check_choice("episode", episode, batch.EPISODE_MODES)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not allowed: use 'ansi', 'human' or None")
        self._engine = Engine(1, rules)
        self.rules = self._engine.rules
        self._mode = batch.REWARD_MODES.index(reward)
        self._hand_episodes = episode == "hand"
        self._carry = False  # a hand episode ended mid-match: the next reset goes on with the match
        self.render_mode = render_mode
        self.possible_agents = ["player_0", "player_1"]
        self.observation_spaces = {a: observation_space() for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._seat0 = np.zeros(1, dtype=np.int64)
        self._one = np.ones(1, dtype=np.bool_)
        self._reward = np.zeros(1, dtype=np.float64)
        self._ended = np.zeros(1, dtype=np.bool_)
        self._seeded = False

    @property
    def engine(self) -> Engine:
        """The one-match `Engine` the agents play in (read it; do not step it)."""
        return self._engine

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of an agent (the same for both)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of an agent (the same for both)."""
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation: only what its seat may know."""
        return encode_one(self._engine, 0, self.possible_agents.index(agent))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode: a new match, or the match's next hand after a hand episode (unless seeded or given
        options)."""
        known = {k: v for k, v in (options or {}).items() if k in ("deck", "first_dealer")}
        decks, dealers = deal_options(known, 1)
        seeds = None
        if seed is not None or not self._seeded:
            seeds = match_seeds(seed if seed is not None else draw_root_seed(), 1)
            self._seeded = True
        if not self._carry or seeds is not None or decks is not None or dealers is not None:
            self._engine.new_matches(seeds=seeds, first_dealers=dealers, decks=decks)
        self._carry = False
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: dict(NO_OUTCOME) for a in self.agents}
        self.agent_selection = self.agents[int(self._engine.current_player[0])]
        if self.render_mode == "human":
            self.render()

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action (None once it is terminated).

        An integer outside the agent's mask (or outside 0..106) raises ValueError naming it and the legal
        actions, state unchanged; anything that is no integer (None, 1.0, True) raises TypeError.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        value = as_action(action)
        if not 0 <= value < NUM_ACTIONS or not self._engine.legal_mask[0, value]:
            raise ValueError(illegal_action_message(value, self._engine.legal_mask[0], f" for {agent}"))
        self._cumulative_rewards[agent] = 0.0
        self._engine.step(np.array([value], dtype=np.int64))
        self._reward[0], self._ended[0] = 0.0, False
        s = self._engine.state
        batch.credit(
            s.last_step,
            s.last_hand,
            s.match,
            s.sheet(),
            self._engine.params,
            self._seat0,
            self._one,
            self._mode,
            self._hand_episodes,
            self._reward,
            self._ended,
        )
        self.rewards = {"player_0": float(self._reward[0]), "player_1": -float(self._reward[0])}
        self.infos = self._outcome_infos()
        if self._ended[0]:
            self.terminations = dict.fromkeys(self.agents, True)
            self._carry = not self._engine.done[0]
        else:
            self.agent_selection = self.agents[int(self._engine.current_player[0])]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _outcome_infos(self) -> dict[str, dict[str, Any]]:
        """Each agent's info after a step: the outcome of the hand and match it ended, from that agent's side."""
        s = self._engine.state
        if s.last_step[0, col.S_HAND_OVER] == 0:
            return {a: dict(NO_OUTCOME) for a in self.agents}
        hands_ended = s.last_step[:, col.S_HAND_OVER]
        return {a: outcome_values(outcome_table(s, hands_ended, np.array([p])), 0) for p, a in enumerate(self.agents)}

    def render(self) -> str | None:
        """The match as text in "ansi" mode (both hands, the pile, the sheet); "human" prints it, returns None."""
        if self.render_mode is None:
            return None
        text = render_match(position_of(self._engine, 0))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
