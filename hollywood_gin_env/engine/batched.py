"""`Engine`: N independent Hollywood Gin matches advanced together by the numba kernels.

Python does O(1) numpy work per call; every loop over matches runs inside a kernel. A match is one
series (R37); when it is over its phase is col.PHASE_OVER until `new_matches` starts it again.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.compile_notice import announce_first_compile
from hollywood_gin_env.engine.kernels import new_match_kernel, step_kernel
from hollywood_gin_env.engine.state import EngineState
from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads, sliced
from hollywood_gin_env.rules.actions import as_actions
from hollywood_gin_env.rules.cards import NUM_CARDS, as_cards
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.messages import shown_value

_NO_GUARD = contextlib.nullcontext()  # reusable; built once, as a step calls the engine twice or more
#: Fewest matches a thread's slice gets: the rules cost about a microsecond a match, a slice a few of Python.
STEP_GRAIN = 128


def overflow_ok() -> contextlib.AbstractContextManager:
    """Wrap-around uint64 arithmetic is intended; plain Python (NUMBA_DISABLE_JIT=1) would warn."""
    return np.errstate(over="ignore") if numba.config.DISABLE_JIT else _NO_GUARD


def step_rows(threads: KernelThreads, actions: np.ndarray, active: np.ndarray, params: np.ndarray, arrays) -> None:
    """`step_kernel` over slices of the matches in `arrays` (an `EngineState.arrays()`) on `threads`."""
    if threads.whole(actions.shape[0], STEP_GRAIN):
        with overflow_ok():
            step_kernel(actions, active, params, arrays)
        return

    def work(lo: int, hi: int) -> None:
        with overflow_ok():  # numpy's error state is per thread
            step_kernel(*sliced(lo, hi, actions, active), params, *sliced(lo, hi, arrays))

    threads.run(actions.shape[0], work, STEP_GRAIN)


def check_deck(deck: object) -> np.ndarray:
    """A fixed deck as 52 distinct card ids (card strings accepted); ValueError otherwise."""
    cards = as_cards(deck)  # type: ignore[arg-type]
    if len(cards) != NUM_CARDS:
        raise ValueError(f"a deck must hold all 52 cards once, got {len(cards)} cards")
    return np.asarray(cards, dtype=np.int64)


class Engine:
    """N matches as struct-of-arrays state (`self.state`; `self.arrays` is its tuple), stepped by numba kernels.

    `num_threads` (default: every CPU this process may use but one, at least one) runs the kernels over slices of
    the matches (hollywood_gin_env/engine/threads.py); every thread count gives the same matches.
    """

    def __init__(self, num_matches: int, rules: Rules | None = None, num_threads: int | None = None) -> None:
        if num_matches < 1:
            raise ValueError(f"num_matches={shown_value(num_matches)} must be at least 1")
        self.num_matches = num_matches
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules={shown_value(self.rules)} is not a hollywood_gin_env.Rules")
        self.params = self.rules.to_params()
        self.threads: KernelThreads = kernel_threads(num_threads)
        announce_first_compile()  # before the first kernel call compiles for 15-40 s on a cold cache
        self._state = EngineState.allocate(num_matches)
        self._state.match[:, col.M_PHASE] = col.PHASE_OVER
        # The kernels' argument, built once: the state's arrays are only ever written in place.
        self.arrays = self._state.arrays()
        self._all = np.ones(num_matches, dtype=np.bool_)

    @property
    def state(self) -> EngineState:
        """The matches' arrays by name (write them in place; the state itself is never replaced)."""
        return self._state

    def new_matches(
        self,
        selected: np.ndarray | None = None,
        seeds: np.ndarray | None = None,
        first_dealers: np.ndarray | None = None,
        decks: np.ndarray | None = None,
    ) -> None:
        """Start new matches where `selected` (default all).

        seeds (uint64 per match, or None to continue each match's random stream), first_dealers
        (-1 = random, R2) and decks (a fixed first deal per match; rows of -1 are shuffled) are
        read only where selected.
        """
        n = self.num_matches
        selected = self._all if selected is None else self._per_match("selected", selected, np.bool_)
        reseed = np.zeros(n, dtype=np.bool_) if seeds is None else np.ones(n, dtype=np.bool_)
        seeds = np.zeros(n, dtype=np.uint64) if seeds is None else self._per_match("seeds", seeds, np.uint64)
        dealers = np.full(n, -1, dtype=np.int64)
        if first_dealers is not None:
            dealers = self._per_match("first_dealers", first_dealers, np.int64, (-1, 1))
        use_deck = np.zeros(n, dtype=np.bool_)
        if decks is not None:
            decks = self._per_match("decks", decks, np.int64, (-1, NUM_CARDS - 1), (NUM_CARDS,))
            use_deck = (decks[:, 0] >= 0) & selected
            shuffled = np.sort(decks[use_deck], axis=1) != np.arange(NUM_CARDS)
            if shuffled.any():
                raise ValueError(
                    f"decks: row {int(np.flatnonzero(use_deck)[shuffled.any(axis=1)][0])} is neither "
                    "all 52 cards once nor a row of -1 (shuffle)"
                )
            self.state.deck[use_deck] = decks[use_deck]
        per_match = (selected, seeds, reseed, dealers, use_deck)
        self.threads.run(n, lambda lo, hi: self._new_rows(per_match, lo, hi), STEP_GRAIN)

    def _new_rows(self, per_match: tuple, lo: int, hi: int) -> None:
        """`new_matches` for matches lo..hi (one thread's slice)."""
        with overflow_ok():  # numpy's error state is per thread
            new_match_kernel(*sliced(lo, hi, *per_match, self.arrays), self.params)

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Apply one action per active match; see `illegal` for the matches whose action was refused."""
        actions = as_actions(actions, self.num_matches)
        active = self._all if active is None else self._per_match("active", active, np.bool_)
        step_rows(self.threads, actions, active, self.params, self.arrays)

    def _per_match(
        self, name: str, values: object, dtype: type, bounds: tuple[int, int] | None = None, row: tuple[int, ...] = ()
    ) -> np.ndarray:
        """values as a dtype array of shape (N, *row), checked: the kernels read one entry per match, unchecked."""
        shape = (self.num_matches, *row)
        if type(values) is np.ndarray and values.dtype == dtype and values.shape == shape and bounds is None:
            return values  # what the envs pass on every step
        array = np.asarray(values)
        if array.shape != shape or array.dtype.kind not in ("b" if dtype is np.bool_ else "iu"):
            raise ValueError(
                f"{name} must be a {np.dtype(dtype).name} array of shape {shape}, "
                f"got {array.dtype.name} of shape {array.shape}"
            )
        if dtype is np.uint64 and array.dtype.kind == "i" and (array < 0).any():
            raise ValueError(f"{name} must be non-negative, got {array.min()}")
        if bounds is not None and ((array < bounds[0]) | (array > bounds[1])).any():
            raise ValueError(f"{name} must lie in {bounds[0]}..{bounds[1]}, got {array.min()}..{array.max()}")
        return array.astype(dtype, copy=False)

    @property
    def legal_mask(self) -> np.ndarray:
        """int8[N, 107]: the legal actions of each match's player to act (all zero once it is over)."""
        return self.state.legal

    @property
    def current_player(self) -> np.ndarray:
        """int64[N]: the player to act in each match."""
        return self.state.match[:, col.M_PLAYER]

    @property
    def done(self) -> np.ndarray:
        """bool[N]: the match is over."""
        return self.state.match[:, col.M_PHASE] == col.PHASE_OVER

    @property
    def done_now(self) -> np.ndarray:
        """bool[N]: the last step ended the match."""
        return self.state.last_step[:, col.S_DONE_NOW] == 1

    @property
    def hand_over(self) -> np.ndarray:
        """bool[N]: the last step ended a hand (the next one is dealt already unless the match ended)."""
        return self.state.last_step[:, col.S_HAND_OVER] == 1

    @property
    def illegal(self) -> np.ndarray:
        """bool[N]: the last action given to the match was illegal and changed nothing."""
        return self.state.last_step[:, col.S_ILLEGAL] == 1


def as_players(players: object, num: int) -> np.ndarray:
    """int64[num] player ids (0 or 1) from an integer array of shape (num,) (a list of ints also works).

    ValueError naming the shape, dtype or value otherwise: the encoder indexes the hands with these ids.
    """
    array = np.asarray(players)
    if array.dtype.kind not in "iu":
        raise ValueError(f"players must be integer ids (0 or 1) of shape ({num},), got dtype {array.dtype}")
    if array.shape != (num,):
        raise ValueError(f"players must have shape ({num},) (one id per match), got shape {array.shape}")
    outside = (array != 0) & (array != 1)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"players must be 0 or 1, got {array[i]} for match {i}")
    return array.astype(np.int64)
