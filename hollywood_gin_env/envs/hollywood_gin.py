"""`HollywoodGinEnv`: the single-agent Gymnasium env ("HollywoodGin-v1"); an opponent plays the other seat."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hollywood_gin_env.display.render import render_match
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.game import position_of
from hollywood_gin_env.envs.learner import LearnerMatches, deal_options
from hollywood_gin_env.envs.spaces import observation_space
from hollywood_gin_env.rules.actions import NUM_ACTIONS, as_action
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.streams import draw_root_seed, match_seeds


class HollywoodGinEnv(gym.Env[dict[str, np.ndarray], np.int64]):
    """
    Hollywood Gin against a built-in or given opponent: one match (a series of three Hollywood games
    scored at once, docs/RULES.md) per episode, or one hand per episode.

    ## Description
    Two players hold ten cards each; on a turn a player draws (the stock or the face-up card) and then
    discards or knocks. Melds, layoffs and scoring are automatic and exact (RULES.md R1-R39). The
    learner holds one seat (random each match unless `learner_seat` fixes it); the opponent plays the
    other seat inside `step`, so every observation the learner gets is its own decision.

    ## Action Space
    `Discrete(107)`: `0` draw from the stock; `1` take the face-up card (the upcard during the offer,
    the top of the discard pile afterwards); `2` pass (the upcard offer only); `3 + c` discard card
    `c`; `55 + c` knock, discarding card `c` (a knock leaving 0 deadwood is gin). Cards are ids
    `suit * 13 + rank` (hollywood_gin_env.rules.cards). Only the actions of `action_mask` are legal.

    ## Observation Space
    `Dict({"observation": Box(0, high, (567,), float32), "action_mask": Box(0, 1, (107,), int8)})`,
    from the learner's view only: its hand, the face-up card and the pile, the opponent's cards seen
    (taken from the pile), discarded or declined, the unseen cards, deadwood features, the phase and
    the Hollywood score sheet. `hollywood_gin_env.engine.observation.OBS_LAYOUT` gives every block's offset.
    The mask is also `info["action_mask"]` and `action_masks()` (the sb3-contrib convention).

    ## Starting State
    A new match: both sheets at 0, a random first dealer (R2), a shuffled deal (or the deck of
    `options["deck"]`), and the opponent's moves played until the learner is to act.

    ## Rewards
    Zero-sum, from the learner's side, summed over everything that happened in the step (its own
    action and the opponent's replies):
    - `reward="hand"` (default): +points/100 for each hand the learner wins, -points/100 for each hand
      the opponent wins (a knock scores d - k, gin 25 + d, an undercut 10 + k - d); a drawn hand 0.
    - `reward="game"`: +1 / -1 for each Hollywood game (G1, G2, G3) closed by the learner / opponent.
    - `reward="match"`: +1 / -1 at the end of the match for the series winner / loser.
    - `reward="chance"`: for each hand scored, 2 x the change it made in the learner's chance to win the
      match (`hollywood_gin_env.rules.win_chance`); a match's rewards add up to 2 x (result - chance at the start).
    A hand the opponent ends before the learner's first decision of an episode (a first-turn knock)
    is scored in the learner's next step.
    Illegal action (an integer id outside the mask, 107 and -1 included): the episode ends and the reward
    is the mode's worst: `-(max(gin_bonus, undercut_bonus) + 100) / 100` (-1.25 by default) for "hand",
    `-num_games` for "game", -1 for "match", -2 for "chance". An action that is no integer (1.0, True, "1")
    raises TypeError: every front end (VectorEnv, SelfPlayVectorEnv, PettingZoo, Game) agrees on what is illegal.

    ## Episode End
    - Termination: `episode="match"`: the series is over (R37); `episode="hand"`: a hand ends (knock,
      gin or drawn hand), and `reset()` then goes on with the same match's next hand (the sheet
      carries over) until the match is over. Also an illegal action (unless `illegal_action="raise"`).
    - Truncation: none (wrap with `gymnasium.wrappers.TimeLimit` for a step limit).
    Stepping a finished episode raises `gymnasium.error.ResetNeeded`; so does stepping after a step
    that the opponent interrupted (it raised, or returned a wrong or illegal answer), until `reset()`.

    ## Information
    `info["action_mask"]` (int8[107]), `info["illegal_action"]` (the step's action was illegal),
    `info["learner_seat"]` (0 or 1).

    ## Arguments
    ```python
    import gymnasium as gym
    import hollywood_gin_env
    env = gym.make("HollywoodGin-v1", opponent="random", rules=hollywood_gin_env.Rules(),
                   reward="hand", episode="match", learner_seat=None, illegal_action="end", render_mode=None,
                   torch_threads=None)
    ```
    - `opponent`: "random" (built in, drawing from the env's seeded streams), a spec that
      `hollywood_gin_env.agents.load_agent` reads ("greedy", "expert", "bot", "checkpoint:PATH", "module:attr", ...),
      an object with `act(observations, action_masks) -> actions` (batched numpy; reseeded through its
      `reset(seed)`, if it has one, by every seeded reset), or such a callable. An opponent given by spec acts on
      `torch_threads` torch threads (default: the programs' choice, one).
    - `rules`: a `hollywood_gin_env.Rules`; None (the default): the rules the opponent was trained under if it
      records them (a checkpoint's), else `Rules()`; rules given always win. `reward`: "hand", "game", "match" or
      "chance". `episode`: "match" or "hand". `learner_seat`: None (random each match), 0 or 1. `illegal_action`:
      "end" or "raise" (ValueError naming the legal actions, state unchanged). `render_mode`: "ansi" (`render()`
      returns the match as text: both hands, pile, sheet), "human" (printed after every reset and step) or
      "rgb_array" (`render()` returns the match as a picture, uint8[540, 960, 3], for video recorders).

    Reset: `reset(seed=k)` is deterministic (the engine seed k and an env stream derived from k);
    `reset()` continues both streams. `options={"deck": [...52 cards...], "first_dealer": 0 or 1}` fixes
    the first deal (RULES.md R3). Either option, or a seed, starts a new match.

    ## Version History
    * v0: Initial version (564 observation features).
    * v1: The observation gains the "take_effect" block (what taking the face-up card would do to the
      hand, from the exact meld solver): 567 features.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        opponent: Any = "random",
        rules: Rules | None = None,
        reward: str = "hand",
        episode: str = "match",
        learner_seat: int | None = None,
        illegal_action: str = "end",
        render_mode: str | None = None,
        torch_threads: int | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not allowed: use 'ansi', 'human', 'rgb_array' or None")
        self._matches = LearnerMatches(
            1, rules, opponent, reward, episode, learner_seat, illegal_action, torch_threads=torch_threads
        )
        self.rules = self._matches.rules
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.render_mode = render_mode
        self._one = np.ones(1, dtype=np.bool_)
        self._action = np.zeros(1, dtype=np.int64)
        self._seeded = False
        self._running = False
        self._illegal = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: a new match, or the next hand of the match after a hand episode."""
        if seed is not None:
            match_seeds(seed, 1)  # a bad seed is refused before np_random is reseeded
        super().reset(seed=seed)
        decks, dealers = deal_options(options, 1)
        seeds = None
        if seed is not None or not self._seeded:
            seeds = match_seeds(seed if seed is not None else draw_root_seed(self.np_random), 1)
            self._seeded = True
        self._matches.new_outputs()
        self._matches.reset(self._one, seeds, decks, dealers)
        self._running = True
        self._illegal = False
        if self.render_mode == "human":
            print(self.render_text())
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponent until the learner is to act or the episode ends."""
        if not self._running and self._matches.broken is None:  # else the matches name the failure
            raise gym.error.ResetNeeded("HollywoodGin-v1: the episode is over (or never started): call reset()")
        value = as_action(action)
        self._action[0] = min(max(value, -1), NUM_ACTIONS)  # out of range stays out of range (illegal) in int64
        self._matches.step(self._action, passed=value)
        terminated = bool(self._matches.ended[0])
        self._running = not terminated
        self._illegal = bool(self._matches.illegal[0])
        if self.render_mode == "human":
            print(self.render_text())
        return self._observation(), float(self._matches.rewards[0]), terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """bool[107]: the learner's legal actions now (sb3-contrib's MaskablePPO calls this)."""
        return self._matches.mask[0].astype(np.bool_)

    def render(self) -> str | np.ndarray | None:
        """The match as text ("ansi"), as an RGB picture uint8[540, 960, 3] ("rgb_array"), or None ("human")."""
        if self.render_mode == "ansi":
            return self.render_text()
        if self.render_mode == "rgb_array":
            from hollywood_gin_env.display.picture import draw_position  # Pillow loads only when a picture is drawn

            return draw_position(position_of(self._matches.engine, 0), int(self._matches.seats[0]))
        return None

    def render_text(self) -> str:
        """The match as text: both hands (the learner marked), the pile and the score sheet."""
        return render_match(position_of(self._matches.engine, 0), int(self._matches.seats[0]))

    @property
    def engine(self) -> Engine:
        """The underlying one-match `Engine` (read it; do not step it)."""
        return self._matches.engine

    @property
    def learner_seat(self) -> int:
        """The learner's seat (0 or 1) in the current match."""
        return int(self._matches.seats[0])

    def _observation(self) -> dict[str, np.ndarray]:
        return {"observation": self._matches.obs[0], "action_mask": self._matches.mask[0]}  # fresh each call

    def _info(self) -> dict[str, Any]:
        return {
            "action_mask": self._matches.mask[0].copy(),
            "illegal_action": self._illegal,
            "learner_seat": int(self._matches.seats[0]),
        }
