"""`LearnerMatches`: N matches seen from the learner's seat, the opponent playing the other seat.

The single env (N = 1) and the vector env share this class, so a vector env of N matches and N
single envs seeded alike run the same code. Python does O(1) numpy calls a step; every loop over
matches runs in a kernel (the engine's, the encoder's, or envs/batch.py's).

Random streams: match i seeded with integer k gets the engine seed k (deals, first dealer; through
`sampling.match_seeds`, as every front end) and an env stream derived from k (the learner's seat,
the built-in random opponent). An unseeded reset continues both streams, so an autoreset and a
plain `reset()` of a single env agree.

A step that fails part-way (the opponent raises, returns the wrong number of actions or an illegal
one) leaves the matches marked broken: the next `step` raises `gymnasium.error.ResetNeeded` naming
the failure, and `reset` starts afresh. Undoing the learner's half-applied move instead would cost
a copy of the state on every step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.error import ResetNeeded

from hollywood_gin_env.engine.batched import Engine, check_deck, overflow_ok, step_rows
from hollywood_gin_env.engine.kernels import step_kernel
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_kernel, encode_rows
from hollywood_gin_env.engine.threads import check_num_threads
from hollywood_gin_env.envs import batch
from hollywood_gin_env.envs.opponents import opponent_name, resolve_opponent
from hollywood_gin_env.envs.spaces import worst_reward
from hollywood_gin_env.rules.actions import NUM_ACTIONS, as_actions, illegal_action_message
from hollywood_gin_env.rules.options import Rules, check_choice
from hollywood_gin_env.support.streams import match_seeds

ILLEGAL_MODES = ("end", "raise")
__all__ = ["ILLEGAL_MODES", "LearnerMatches", "deal_options", "match_seeds"]


class LearnerMatches:
    """N matches from the learner's seats; `step` plays the opponent until the learner acts again.

    `num_threads` (default: every CPU this process may use but one, at least one) runs the kernels over slices of
    the matches, and an opponent given by name gets as many; the results are the same for every count. An opponent
    given by name acts on `torch_threads` torch threads (default: the programs' choice). `rules` (default: the rules
    the opponent was trained under, else the defaults) are the matches' rules.
    """

    def __init__(
        self,
        num_matches: int,
        rules: Rules | None = None,
        opponent: Any = "random",
        reward: str = "hand",
        episode: str = "match",
        learner_seat: int | None = None,
        illegal_action: str = "end",
        num_threads: int | None = None,
        torch_threads: int | None = None,
    ) -> None:
        check_choice("reward", reward, batch.REWARD_MODES)
        check_choice("episode", episode, batch.EPISODE_MODES)
        check_choice("learner_seat", learner_seat, (None, 0, 1))
        check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
        self.opponent, self._reseed_opponent, rules = resolve_opponent(
            opponent, check_num_threads(num_threads), torch_threads, rules
        )
        self.engine = Engine(num_matches, rules, num_threads)
        self.rules = self.engine.rules
        self.num_matches = n = num_matches
        # One match or one kernel thread: every kernel runs on the whole arrays in this thread, so the step calls
        # them directly, without the per-call slicing decision of the *_rows functions (a single env's step is
        # about 17 µs, and those decisions cost it about a tenth)
        self._whole = n == 1 or self.engine.threads.num_threads == 1
        self.opponent_name = opponent_name(opponent)
        self.broken: str | None = None  # why the last step or reset failed part-way (then a reset is needed)
        self.mode = batch.REWARD_MODES.index(reward)
        self.hand_episodes = episode == "hand"
        self.fixed_seat = -1 if learner_seat is None else learner_seat
        self.raise_illegal = illegal_action == "raise"
        self.worst_reward = worst_reward(self.rules, reward)
        self.seats = np.zeros(n, dtype=np.int64)
        self.rng = np.zeros(n, dtype=np.uint64)
        self.obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self.rewards = np.zeros(n, dtype=np.float64)
        self.ended = np.zeros(n, dtype=np.bool_)
        self.illegal = np.zeros(n, dtype=np.bool_)
        self._pending = np.zeros(n, dtype=np.float64)  # earned before the learner's first decision
        self._carry = np.zeros(n, dtype=np.bool_)  # a hand episode ended: the next reset goes on with the match
        self._need = np.zeros(n, dtype=np.bool_)
        self._playing = np.zeros(n, dtype=np.bool_)  # the learner's action was legal
        self._scratch = np.zeros(n, dtype=np.bool_)
        self._all = np.ones(n, dtype=np.bool_)
        self._opp_actions = np.zeros(n, dtype=np.int64)
        if self.opponent is not None:
            self._opp_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
            self._opp_mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
            self._opp_illegal = np.zeros(n, dtype=np.bool_)

    # --- reset -----------------------------------------------------------------------------------
    def reset(
        self,
        selected: np.ndarray,
        seeds: np.ndarray | None = None,
        decks: np.ndarray | None = None,
        first_dealers: np.ndarray | None = None,
    ) -> None:
        """Start the selected episodes: a new match, or the next hand where a hand episode ended mid-match.

        seeds (one integer per match) reseed both streams; decks (rows of 52 ids, -1 rows shuffled)
        and first_dealers (-1 = random) fix the first deal. Any of them forces a new match. The rows
        of `obs` and `mask` are rewritten in place: call `new_outputs()` first unless they are fresh.
        """
        if self.broken is not None:  # a match may be half-stepped: every episode starts afresh
            selected, self._carry[:] = self._all, False
        forced = seeds is not None or decks is not None or first_dealers is not None
        fresh = selected.copy() if forced else selected & ~self._carry
        try:
            if seeds is not None:
                seeds = np.asarray(seeds, dtype=np.uint64)
                self.rng[selected] = batch.env_stream_seeds(seeds[selected])
                if self._reseed_opponent is not None:
                    self._reseed_opponent(int(seeds[np.argmax(selected)]))
            self.engine.new_matches(selected=fresh, seeds=seeds, first_dealers=first_dealers, decks=decks)
            batch.draw_seats(fresh, self.fixed_seat, self.rng, self.seats)
            self._carry[selected] = False
            self._pending[selected] = 0.0
            self._settle(selected)
        except BaseException as error:
            self._break("reset", error)
            raise
        self.broken = None
        self.encode(selected)

    def _settle(self, selected: np.ndarray) -> None:
        """Play the opponent until the learner acts; restart matches that end before it does."""
        while True:
            self._scratch[:] = False
            self._play_opponent(selected, self._scratch, self._pending, hand_episodes=False)
            over = selected & self.engine.done
            if not over.any():
                return
            self.engine.new_matches(selected=over)
            batch.draw_seats(over, self.fixed_seat, self.rng, self.seats)
            self._pending[over] = 0.0

    # --- step ------------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, passed: Any = None) -> None:
        """Apply the learner's actions in every match and play the opponent until the learner acts again.

        Fills `rewards`, `ended` (the episode is over) and `illegal`, and encodes the learner's view
        into fresh `obs` and `mask` arrays (callers may hand them out without copying). `passed` is what
        the caller was given, if it differs from actions (for the message of an illegal action).
        """
        if self.broken is not None:
            raise ResetNeeded(f"the last step or reset failed part-way ({self.broken}): call reset() first")
        passed = actions if passed is None else passed
        actions = as_actions(actions, self.num_matches)
        if self.raise_illegal and batch.mark_illegal(actions, self.engine.legal_mask, self._all, self.illegal):
            raise ValueError(self._illegal_message(passed))
        engine, playing = self.engine, self._playing
        s = engine.state
        batch.begin_step(actions, engine.legal_mask, self.illegal, playing, self._pending, self.rewards, self.ended)
        try:
            # step_rows, not engine.step: the actions and the mask are already checked (a single env's step is
            # a few microseconds, so the second check would cost a few percent)
            if self._whole:
                self._step_whole(actions, playing)
            else:
                step_rows(engine.threads, actions, playing, engine.params, engine.arrays)
                batch.credit_rows(engine, self.seats, playing, self.mode, self.hand_episodes, self.rewards, self.ended)
                self._play_opponent(playing, self.ended, self.rewards, self.hand_episodes)
        except BaseException as error:  # the learner's move is in, the opponent's replies are not
            self._break("step", error)
            raise
        batch.end_step(s.match, self.illegal, self.worst_reward, self.rewards, self.ended, self._carry)
        self.new_outputs()
        self.encode(self._all)

    def _step_whole(self, actions: np.ndarray, playing: np.ndarray) -> None:
        """The learner's move, its credit and the built-in opponent's turns as step_rows, credit_rows and
        random_opponent_rows run them in one slice: the kernels on the whole arrays."""
        params, arrays, s = self.engine.params, self.engine.arrays, self.engine.state
        seats, rewards, ended, mode, hands = self.seats, self.rewards, self.ended, self.mode, self.hand_episodes
        with overflow_ok():
            step_kernel(actions, playing, params, arrays)
            batch.credit(
                s.last_step, s.last_hand, s.match, s.sheet(), params, seats, playing, mode, hands, rewards, ended
            )
            if self.opponent is None:
                need, rng, chosen = self._need, self.rng, self._opp_actions
                batch.random_opponent_turns(
                    arrays, params, seats, playing, ended, rewards, mode, hands, need, rng, chosen
                )
                return
        self._play_opponent(playing, ended, rewards, hands)

    def _break(self, where: str, error: BaseException) -> None:
        """Mark the matches as needing a reset after `error` interrupted a step or reset part-way."""
        self.broken = f"{where} interrupted by {type(error).__name__}: {error}"
        self.mask = np.zeros_like(self.mask)  # nothing is legal in a half-stepped match (handed-out masks stay)

    def _illegal_message(self, passed: Any) -> str:
        i = int(np.flatnonzero(self.illegal)[0])
        where = f" in match {i}" if self.num_matches > 1 else ""
        return illegal_action_message(np.asarray(passed).reshape(-1)[i], self.engine.legal_mask[i], where)

    def _play_opponent(self, active: np.ndarray, ended: np.ndarray, rewards: np.ndarray, hand_episodes: bool) -> None:
        """Step the opponent in the active matches until the learner is to act or the episode ends."""
        if self.opponent is None:  # the built-in opponent: the loop below, in one kernel call per thread
            batch.random_opponent_rows(
                self.engine,
                self.seats,
                active,
                ended,
                rewards,
                self.mode,
                hand_episodes,
                self._need,
                self.rng,
                self._opp_actions,
            )
            return
        s, need = self.engine.state, self._need
        while batch.opponent_turns(s.match, self.seats, active, ended, need):
            self._external_actions(need)
            self.engine.step(self._opp_actions, need)
            batch.credit_rows(self.engine, self.seats, need, self.mode, hand_episodes, rewards, ended)

    def _external_actions(self, need: np.ndarray) -> None:
        """The external opponent's actions in the matches where it is to act (checked for legality)."""
        state, params = self.engine.arrays, self.engine.params
        encode_rows(self.engine.threads, 1 - self.seats, need, state, params, self._opp_obs, self._opp_mask)
        rows = np.flatnonzero(need)
        chosen = self.opponent(self._opp_obs[rows], self._opp_mask[rows])
        self._opp_actions[rows] = as_actions(chosen, rows.size, f"the actions of opponent {self.opponent_name}")
        if batch.mark_illegal(self._opp_actions, self.engine.legal_mask, need, self._opp_illegal):
            i = int(np.flatnonzero(self._opp_illegal)[0])
            raise ValueError(f"opponent {self.opponent_name} chose illegal action {self._opp_actions[i]} in match {i}")

    def new_outputs(self) -> None:
        """Give `obs` and `mask` fresh arrays, so the ones handed out before stay as they were."""
        self.obs = np.empty_like(self.obs)
        self.mask = np.empty_like(self.mask)

    def encode(self, selected: np.ndarray) -> None:
        """Write the learner's observation and action mask of the selected matches into obs and mask."""
        engine = self.engine
        if self._whole:
            encode_kernel(self.seats, selected, engine.arrays, engine.params, self.obs, self.mask)
        else:
            encode_rows(engine.threads, self.seats, selected, engine.arrays, engine.params, self.obs, self.mask)


def deal_options(options: dict | None, num_matches: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The fixed decks and first dealers in reset options {"deck": ..., "first_dealer": ...}, or None."""
    options = options or {}
    unknown = set(options) - {"deck", "first_dealer"}
    if unknown:
        raise ValueError(f"unknown reset options {sorted(unknown)}: allowed are 'deck' and 'first_dealer'")
    decks = dealers = None
    if options.get("deck") is not None:
        deck = options["deck"]
        rows = [deck] if num_matches == 1 or _is_one_deck(deck) else list(deck)
        if len(rows) == 1:
            rows = rows * num_matches
        if len(rows) != num_matches:
            raise ValueError(f"options['deck'] must be one deck or {num_matches} decks")
        decks = np.stack([np.full(52, -1, np.int64) if r is None else check_deck(r) for r in rows])
    if options.get("first_dealer") is not None:
        dealers = np.broadcast_to(np.asarray(options["first_dealer"], dtype=np.int64), (num_matches,)).copy()
        if not np.isin(dealers, (0, 1)).all():
            raise ValueError(f"options['first_dealer'] must be 0 or 1, got {options['first_dealer']!r}")
    return decks, dealers


def _is_one_deck(deck: Any) -> bool:
    """True if deck is a single deck (a string, or 52 card ids or names) rather than a list of decks."""
    if isinstance(deck, str):
        return True
    items = list(deck)
    return len(items) == 52 and all(isinstance(c, (str, int, np.integer)) for c in items)
