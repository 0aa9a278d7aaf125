"""The advantage estimate by reference (`[ppo] advantages`, hollywood_gin_trainer/advantages.py): an estimator is
called along each player's chain of decisions, one episode each, so GAE written that way gives the trainer's kernel's
advantages; it is resolved, declared and tried on a chain before a run starts, and every bad answer is one line; a
config of the user's own imports its module and a training state's does not; a run trains on its advantages."""

from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.engine.threads import kernel_threads  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_trainer.advantages import chain_advantages, decision_chains  # noqa: E402
from hollywood_gin_trainer.config import PPOConfig, config_from_dict, load_config  # noqa: E402
from hollywood_gin_trainer.ppo import Rollout, advantages, credit, rollout_batch  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun  # noqa: E402
from tests import estimators_for_tests  # noqa: E402, F401 (as a user's own code imports its estimator)

MODULE = "tests.estimators_for_tests"
SMOKE = "configs/smoke.toml"
SMALL = ["warmstart.decisions=64", "env.num_envs=8", "eval.matches=2"]


def _random_rollout(steps: int = 80, num_envs: int = 6, seed: int = 0, learner_seat: int | None = None) -> Rollout:
    """A rollout of real matches (greedy in both seats, credited as the trainer credits them) with random values;
    the learner's rows are one seat's, or both seats' (None)."""
    env = SelfPlayVectorEnv(num_envs, reward="hand", episode="hand")
    obs, infos = env.reset(seed=seed)
    storage = Rollout(steps, num_envs, obs["observation"].shape[1], 1, 1)
    rng, greedy = np.random.default_rng(seed), load_agent("greedy")
    for t in range(steps):
        players = infos["current_player"]
        storage.valid[t] = True if learner_seat is None else players == learner_seat
        storage.players[t], storage.values[t] = players, rng.normal(size=num_envs)
        obs, rewards, terms, _, infos = env.step(greedy.act(obs["observation"], obs["action_mask"]))
        credit(storage, infos["decision_step"], rewards, terms, env.threads)
    storage.bootstrap[:] = rng.normal(size=(num_envs, 2))
    return storage


def _ppo(function: str, gamma: float = 0.99, lam: float = 0.95) -> PPOConfig:
    return PPOConfig(gamma=gamma, gae_lambda=lam, advantages=f"{MODULE}:{function}")


@pytest.mark.parametrize("learner_seat", [None, 1])
def test_gae_written_along_one_chain_gives_the_kernels_advantages(learner_seat):
    """Per-player GAE as a chain estimator (tests/estimators_for_tests.py's `chain_gae`) equals the trainer's kernel
    on rollouts of real matches, whose chains end in hands scored, cut by the rollout, and skip a frozen seat."""
    storage = _random_rollout(seed=5, learner_seat=learner_seat)
    assert storage.dones.any()
    for gamma, lam in ((0.99, 0.95), (1.0, 1.0), (0.9, 0.0)):
        expected = advantages(storage, gamma, lam, kernel_threads(1))
        estimated = chain_advantages(storage, _ppo("chain_gae", gamma, lam))
        assert estimated.dtype == np.float32 and np.allclose(estimated, expected, atol=1e-5)
        assert (estimated[~storage.valid] == 0).all()


def test_a_chain_is_one_players_decisions_of_one_episode_in_order():
    """Every valid row is in exactly one chain; a chain's rows are one player's, in order, in one match; only its
    last row may end the episode; its next value is 0 where that row ended it, else the player's bootstrap."""
    storage = _random_rollout(seed=7, learner_seat=None)
    seen = np.zeros_like(storage.valid, dtype=np.int64)
    ended = cut = 0
    for i, rows, next_value in decision_chains(storage):
        seen[rows, i] += 1
        players = storage.players[rows, i]
        assert (players == players[0]).all() and (np.diff(rows) > 0).all()
        assert not storage.dones[rows[:-1], i].any()
        if storage.dones[rows[-1], i]:
            ended += 1
            assert next_value == 0.0
        else:
            cut += 1
            assert next_value == float(storage.bootstrap[i, players[0]])
    assert (seen == storage.valid).all() and ended and cut


def test_an_estimator_gets_copies_of_the_rollout():
    """What an estimator writes into the arrays it is given never reaches the rollout."""
    storage = _random_rollout(seed=1)
    rewards, values = storage.rewards.copy(), storage.values.copy()
    assert (chain_advantages(storage, _ppo("scribbles")) == 0).all()
    assert (storage.rewards == rewards).all() and (storage.values == values).all()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("gea", """ppo.advantages='gea': use "gae" or MODULE:FUNCTION naming a function marked @advantage_"""),
        ("os:system", "ppo.advantages='os:system' names the function posix.system, which is not a function marked"),
        (f"{MODULE}:undeclared", f"names the function {MODULE}.undeclared, which is not a function marked @adv"),
        (f"{MODULE}:nowhere", f"ppo.advantages='{MODULE}:nowhere': the module '{MODULE}' has no attribute 'nowhere'"),
        (f"{MODULE}:one_short", "on a chain of 3 decisions it returned shape (2,); an estimator returns 3 finite"),
        (f"{MODULE}:not_finite", "on a chain of 3 decisions it returned values that are not finite"),
        (f"{MODULE}:text", "on a chain of 3 decisions: ValueError: could not convert string to float: 'high'"),
        (f"{MODULE}:raises", f"ppo.advantages='{MODULE}:raises': on a chain of 3 decisions: RuntimeError: no estim"),
        ("no_such_module_zz:f", "ppo.advantages='no_such_module_zz:f': cannot import the module 'no_such_module_zz'"),
        ("", "ppo.advantages='' is not allowed: string should have at least 1 character"),
    ],
)
def test_a_bad_estimator_is_refused_before_the_run_in_one_line(value, message):
    """The config check resolves the estimator, checks its declaration and calls it on a three-decision chain: any
    failure is one line naming ppo.advantages."""
    with pytest.raises(ValueError) as refused:
        load_config(SMOKE, [f"ppo.advantages={value}" if value else "ppo.advantages=''"])
    assert message in str(refused.value) and "\n" not in str(refused.value)


USER_ESTIMATOR = """
import numpy as np
from hollywood_gin_trainer.advantages import advantage_estimator

@advantage_estimator
def monte_carlo(rewards, values, next_value, ppo):
    returns, total = np.empty(len(rewards)), next_value
    for k in reversed(range(len(rewards))):
        total = rewards[k] + ppo.gamma * total
        returns[k] = total
    return returns - values
"""


def test_a_config_file_imports_the_module_of_its_estimator_and_a_saved_config_does_not(tmp_path, monkeypatch):
    """ppo.advantages=MODULE:FUNCTION in the user's own config (a file, --set) imports its module; the same config
    read as a file's (config_from_dict, as a training state's is) resolves only once the module is imported, and its
    refusal names --import and imports nothing."""
    name = f"user_adv_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_ESTIMATOR)
    (tmp_path / "mine.toml").write_text(f'[ppo]\nadvantages = "{name}:monte_carlo"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    data = {"ppo": {"advantages": f"{name}:monte_carlo"}}
    try:
        with pytest.raises(ValueError, match=rf"module '{name}', which is not imported.*pass --import {name}"):
            config_from_dict(data)
        assert name not in sys.modules
        config = load_config(str(tmp_path / "mine.toml"))
        assert name in sys.modules and config.ppo.advantages == f"{name}:monte_carlo"
        assert config_from_dict(data) == config
    finally:
        sys.modules.pop(name, None)


def test_a_run_trains_on_its_estimators_advantages_and_resumes_only_with_the_module_imported(tmp_path):
    """A smoke run with n-step returns: its batch's advantages are the estimator's along the rollout's chains and its
    value targets are advantages + values; it updates; its training state resumes only once the estimator's module is
    imported (a file imports nothing), refused in one line naming --import before."""
    config = load_config(SMOKE, [*SMALL, f"ppo.advantages={MODULE}:n_step"])
    run = TrainingRun.create(config)
    try:
        run.start()
        batch = rollout_batch(run.arena, run.model, config.ppo)
        storage = run.arena.rollout
        expected = chain_advantages(storage, config.ppo)[storage.valid]
        assert np.array_equal(batch.advantages.numpy(), expected) and (expected != 0).any()
        assert torch.equal(batch.returns, batch.advantages + batch.values)
        assert np.isfinite(run.update(1)["losses/value_loss"])
        run.save(tmp_path / "last.safetensors")
    finally:
        run.close()
    module = sys.modules.pop(MODULE)
    try:
        with pytest.raises(ValueError) as refused:
            TrainingRun.resume(tmp_path / "last.safetensors")
        assert f"module '{MODULE}', which is not imported" in str(refused.value)
        assert f"pass --import {MODULE}" in str(refused.value) and MODULE not in sys.modules
    finally:
        sys.modules[MODULE] = module
    resumed = TrainingRun.resume(tmp_path / "last.safetensors")
    try:
        assert resumed.config.ppo.advantages == f"{MODULE}:n_step" and resumed.progress.update == 1
    finally:
        resumed.close()
