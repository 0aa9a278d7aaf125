"""Per-match random streams (splitmix64: `random_below`) and the seeds that start them: the one path from a user's
seed to the engine's streams (`match_seeds`), shared by every layer that draws (the deal, the win chance, the envs'
seats and random opponent)."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.messages import shown_value

_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@njit
def random_below(rng: np.ndarray, i: int, n: int) -> int:
    """A random integer in [0, n) from stream i of rng (uint64 splitmix64 states, advanced in place)."""
    z = rng[i] + _GAMMA
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int((z >> np.uint64(11)) % np.uint64(n))


#: Engine streams hold uint64 states: seeds are integers in 0..SEED_MAX (larger ones are refused, not reduced).
SEED_MAX = (1 << 64) - 1
#: Root seeds drawn for an unseeded first reset lie in [0, ROOT_SEED_BOUND) (what Game logs and replays).
ROOT_SEED_BOUND = 1 << 63


def draw_root_seed(np_random: np.random.Generator | None = None) -> int:
    """A root seed for a front end reset without one: from its np_random, else from fresh OS entropy."""
    rng = np_random if np_random is not None else np.random.default_rng()
    return int(rng.integers(ROOT_SEED_BOUND))


def check_seed(seed: object, name: str = "seed") -> int:
    """seed as an int if it is an integer in 0..2**64-1 (bools, floats and strings are no seeds); else ValueError."""
    if not _is_integer(seed) or not 0 <= int(seed) <= SEED_MAX:  # type: ignore[call-overload]
        raise ValueError(f"{name}={shown_value(seed)} is not allowed: seeds are integers in 0..2**64-1")
    return int(seed)  # type: ignore[call-overload]


def match_seeds(seed: object, num_matches: int) -> np.ndarray:
    """One uint64 engine seed per match: seed + i for an integer seed (as SyncVectorEnv seeds its envs), or the
    integers of a list as given. Every front end (Game, the envs, PettingZoo) seeds through here, so one seed
    deals the same cards everywhere. Every match's seed lies in 0..2**64-1 (bools and floats are refused)."""
    if _is_integer(seed):
        first = check_seed(seed)
        if first + num_matches - 1 > SEED_MAX:
            raise ValueError(
                f"seed={shown_value(seed)} is not allowed: match i is seeded with seed + i, and with {num_matches} "
                f"matches the seeds must stay in 0..2**64-1 (seed at most {SEED_MAX - num_matches + 1})"
            )
        seeds = [first + i for i in range(num_matches)]
    else:
        values = np.asarray(seed, dtype=object).reshape(-1) if not isinstance(seed, (str, bytes, dict)) else None
        if values is None or len(values) != num_matches or not all(_is_integer(v) for v in values):
            one = "an integer" if num_matches == 1 else f"an integer or {num_matches} integers"
            raise ValueError(f"seed={shown_value(seed)} is not allowed: use {one}")
        seeds = [check_seed(v, f"seed[{i}]") for i, v in enumerate(values)]
    return np.array(seeds, dtype=np.uint64)


def _is_integer(value: object) -> bool:
    """True for Python and numpy integers; False for bools (True is no seed) and everything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
