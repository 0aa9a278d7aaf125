"""The advantage estimate by reference: `[ppo] advantages`.

`"gae"` (the default) is per-player GAE: ppo.py's `per_player_gae`, one numba kernel over the whole rollout. Any
other value is `MODULE:FUNCTION`, a function of your own declared with `@advantage_estimator`, which the trainer calls
once for each decision chain of the rollout:

    estimator(rewards, values, next_value, ppo) -> advantages

A chain is one player's decisions in one episode (a match; a hand with `env.episode = "hand"`) within the rollout,
in order, the opponent's decisions between them left out, so the estimator needs no bookkeeping of seats or turns:

    rewards     float32[L]  what each decision was credited (a reward may land after the opponent's reply: ppo.py's
                            `credit_rows` puts it on the decision it belongs to)
    values      float32[L]  the value head's estimate of each decision
    next_value  float       the value after the chain's last decision: 0.0 where the episode ended there, else the
                            value head's estimate of the player's view at the rollout's end (the rollout cut the chain)
    ppo         PPOConfig   the run's [ppo] (gamma, gae_lambda, ...)

and returns L finite advantages (any sequence of numbers numpy reads as float[L]). The value head's targets are
advantages + values, so an estimator of returns G gives G - values. Before a run starts (when its config is
checked) the function must resolve among the modules already imported (a config of your own imports its module,
as it does a network's; a config read back from a training state does not: `--import MODULE`), be declared, and
return finite advantages for a chain of PROBE's three decisions; every chain of every update is checked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np

from hollywood_gin_env.support.imports import (
    MAX_REFERENCE,
    declare,
    find_reference,
    first_line,
    is_declared,
    is_reference,
)
from hollywood_gin_env.support.messages import shown_value

GAE = "gae"
ROLE = "advantage estimator"  # what @advantage_estimator declares a function (support/imports.py)
DECLARATION = "a function marked @advantage_estimator (hollywood_gin_trainer/advantages.py)"
#: The chain an estimator is called on before a run starts: (rewards, values, next_value).
PROBE = (np.array([0.0, 0.5, -1.0], dtype=np.float32), np.array([0.1, -0.2, 0.3], dtype=np.float32), 0.4)

#: (rewards, values, next_value, the run's PPOConfig) -> advantages (module docstring).
Estimator = Callable[[np.ndarray, np.ndarray, float, Any], Any]


class ChainRollout(Protocol):
    """What the chains are read from: ppo.py's `Rollout` (T steps x N matches)."""

    num_envs: int
    rewards: np.ndarray  # float32[T, N]
    values: np.ndarray  # float32[T, N]
    dones: np.ndarray  # bool[T, N]: the row's decision ended its episode
    valid: np.ndarray  # bool[T, N]: the row is a decision trained on
    players: np.ndarray  # int64[T, N]: the seat that made it
    bootstrap: np.ndarray  # float32[N, 2]: the value of each seat's view at the rollout's end


def advantage_estimator(function: Estimator) -> Estimator:
    """Mark a function as an advantage estimator (module docstring), so `[ppo] advantages` may name it."""
    return declare(function, ROLE)


def is_advantage_estimator(value: object) -> bool:
    """True for what is marked `@advantage_estimator`."""
    return is_declared(value, ROLE)


def _named(name: str) -> str:
    """How messages name the config's value."""
    return f"ppo.advantages={shown_value(name, MAX_REFERENCE)}"


def find_estimator(name: str) -> Estimator:
    """The function a MODULE:FUNCTION names, among the modules already imported; ValueError in one line unless it
    is one, declared."""
    if not is_reference(name):
        raise ValueError(f'{_named(name)}: use "{GAE}" or MODULE:FUNCTION naming {DECLARATION}')
    return find_reference(name, _named(name), False, is_advantage_estimator, DECLARATION)


def check_estimator(ppo: Any) -> None:
    """ValueError in one line unless `ppo.advantages` (of a PPOConfig) is "gae" or resolves to an estimator that
    returns finite advantages for the PROBE chain."""
    if ppo.advantages != GAE:
        chain_estimate(find_estimator(ppo.advantages), *PROBE, ppo)


def chain_estimate(
    estimator: Estimator, rewards: np.ndarray, values: np.ndarray, next_value: float, ppo: Any
) -> np.ndarray:
    """The estimator's advantages of one chain (copies of its arrays go in), as float32[L]; ValueError in one line
    naming the estimator if it raises or returns anything else."""
    length = len(rewards)
    try:
        out = np.asarray(estimator(rewards.copy(), values.copy(), float(next_value), ppo), dtype=np.float32)
    except Exception as error:  # noqa: BLE001 (the user's code, or what it returned: one line, named)
        raise ValueError(f"{_named(ppo.advantages)}: on a chain of {length} decisions: {first_line(error)}") from None
    if out.shape != (length,) or not np.isfinite(out).all():
        shown = f"shape {out.shape}" if out.shape != (length,) else "values that are not finite"
        raise ValueError(
            f"{_named(ppo.advantages)}: on a chain of {length} decisions it returned {shown}; an estimator returns "
            f"{length} finite float32 advantages, one a decision"
        )
    return out


def decision_chains(storage: ChainRollout) -> Iterator[tuple[int, np.ndarray, float]]:
    """(match, rows, next_value) of every chain of the rollout (module docstring): the rows of one player's
    decisions in one episode, in order, and the value after its last one."""
    for i in range(storage.num_envs):
        for p in (0, 1):
            rows = np.flatnonzero(storage.valid[:, i] & (storage.players[:, i] == p))
            for chain in np.split(rows, np.flatnonzero(storage.dones[rows, i]) + 1):
                if chain.size:
                    ended = bool(storage.dones[chain[-1], i])
                    yield i, chain, 0.0 if ended else float(storage.bootstrap[i, p])


def chain_advantages(storage: ChainRollout, ppo: Any) -> np.ndarray:
    """The advantages of every valid row (0 elsewhere) by the estimator `ppo.advantages` names, chain by chain."""
    estimator = find_estimator(ppo.advantages)
    out = np.zeros_like(storage.values)
    for i, rows, next_value in decision_chains(storage):
        out[rows, i] = chain_estimate(estimator, storage.rewards[rows, i], storage.values[rows, i], next_value, ppo)
    return out
