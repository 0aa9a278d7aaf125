"""A damaged last.pt is refused at resume, in one line naming the field, instead of crashing the run later.

The optimizer's moments (shape, stride 0, NaN, negative mean of squares), its step and betas, the model's weights,
the progress counters and the opponent pool (its snapshot count against selfplay.pool_size, wins, played,
next_slot) are all checked before anything is restored.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.pool import OpponentPool  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun  # noqa: E402

SMOKE = "configs/smoke.toml"
NAN = float("nan")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A smoke run's last.pt after two updates (so Adam has moments and the pool has its 2 snapshots)."""
    run = TrainingRun.create(load_config(SMOKE, ["warmstart.decisions=0"]))
    run.start()
    for update in (1, 2):
        _, ent_coef = run.schedule(update)
        run.learn(run.collect(), ent_coef)
        run.progress.update = update
        run.snapshot(update)
    path = tmp_path_factory.mktemp("run") / "last.pt"
    run.save(path)
    return path


def first_moment(train, key="exp_avg"):
    """The first parameter's Adam state entry and its tensor `key`."""
    entry = train["optimizer"]["state"][0]
    return entry, entry[key]


def resume_damaged(saved, tmp_path, damage) -> str:
    """The one-line message of resuming `saved` after damage(train) (it must be refused)."""
    data = torch.load(saved, weights_only=True)
    damage(data["train"])
    torch.save(data, tmp_path / "bad.pt")
    with pytest.raises(ValueError) as error:
        TrainingRun.resume(tmp_path / "bad.pt")
    message = str(error.value)
    assert "\n" not in message and str(tmp_path / "bad.pt") in message
    return message


def _set(mapping, key, value):
    mapping[key] = value


DAMAGES = {
    "optimizer moment of the wrong shape": (
        lambda t: _set(first_moment(t)[0], "exp_avg", torch.zeros(3)),
        "optimizer.state[0] does not fit its parameter",
    ),
    "optimizer moment of stride 0": (
        lambda t: _set(first_moment(t)[0], "exp_avg", torch.zeros(1).expand(first_moment(t)[1].shape)),
        "optimizer.state[0]: parameter 'exp_avg' is not a dense contiguous tensor",
    ),
    "optimizer moment NaN": (lambda t: first_moment(t)[1].fill_(NAN), "optimizer.state[0]: parameter 'exp_avg'"),
    "optimizer negative mean of squares": (
        lambda t: first_moment(t, "exp_avg_sq")[1].fill_(-1.0),
        "optimizer.state[0]: exp_avg_sq holds negative values",
    ),
    "optimizer negative step": (
        lambda t: _set(first_moment(t)[0], "step", torch.tensor(-5.0)),
        "optimizer.state[0].step=",
    ),
    "optimizer NaN step": (lambda t: _set(first_moment(t)[0], "step", torch.tensor(NAN)), "optimizer.state[0].step="),
    "optimizer bad betas": (
        lambda t: _set(t["optimizer"]["param_groups"][0], "betas", (1.5, 0.999)),
        "optimizer.param_groups[0].betas=(1.5, 0.999)",
    ),
    "optimizer NaN lr": (
        lambda t: _set(t["optimizer"]["param_groups"][0], "lr", NAN),
        "optimizer.param_groups[0].lr=nan",
    ),
    "optimizer amsgrad switched on": (
        lambda t: _set(t["optimizer"]["param_groups"][0], "amsgrad", True),
        "optimizer.param_groups[0].amsgrad=True",
    ),
    "optimizer state of an unknown parameter": (
        lambda t: _set(t["optimizer"]["state"], 999, dict(t["optimizer"]["state"][0])),
        "optimizer.state[999]: the index must be an int in 0..",
    ),
    "model weights NaN": (
        lambda t: next(iter(t["model"].values())).fill_(NAN),
        "non-finite or non-float weights",
    ),
    "pool next_slot out of range": (lambda t: _set(t["pool"], "next_slot", 99), "pool.next_slot=99"),
    "pool wins of the wrong shape": (
        lambda t: _set(t["pool"], "wins", torch.zeros(7, dtype=torch.float64)),
        "pool.wins",
    ),
    "pool played NaN": (lambda t: t["pool"]["played"].fill_(NAN), "pool.played: values must be finite"),
    "pool wins above played": (lambda t: t["pool"]["wins"].fill_(5.0), "pool.wins: more wins than matches played"),
    "pool snapshot NaN": (
        lambda t: next(iter(t["pool"]["snapshots"][1].values())).fill_(NAN),
        "pool.snapshots[1]: parameter",
    ),
    "pool snapshots beyond pool_size": (
        lambda t: (
            _set(t["pool"], "snapshots", t["pool"]["snapshots"][:1] * 1000),
            _set(t["pool"], "updates", [1] * 1000),
        ),
        "pool.snapshots: 1,000 snapshots, but selfplay.pool_size is 2",
    ),
    "progress update of the wrong type": (lambda t: _set(t["progress"], "update", "2"), "progress.update='2'"),
    "progress wall time NaN": (lambda t: _set(t["progress"], "wall_seconds", NAN), "progress.wall_seconds=nan"),
    "progress best_lower out of range": (lambda t: _set(t["progress"], "best_lower", 7.0), "progress.best_lower=7.0"),
    "progress history entry NaN": (
        lambda t: _set(t["progress"], "history", [{"update": NAN}]),
        "progress.history[0]",
    ),
}


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_damaged_training_state_is_refused_at_resume_naming_the_field(saved, tmp_path, case):
    damage, fragment = DAMAGES[case]
    assert fragment in resume_damaged(saved, tmp_path, damage)


def test_the_undamaged_state_resumes(saved):
    run = TrainingRun.resume(saved)
    assert run.progress.update == 2 and len(run.pool.snapshots) == 2


def test_a_pool_refusing_a_state_is_left_as_it_was(saved):
    """OpponentPool.load_state_dict checks wins, played and next_slot before changing anything."""
    train = torch.load(saved, weights_only=True)["train"]
    run = TrainingRun.resume(saved)
    pool: OpponentPool = run.pool
    before = (list(pool.snapshots), pool.wins.copy(), pool.played.copy(), pool.next_slot)
    for field, value in (("next_slot", -1), ("next_slot", True), ("wins", torch.zeros(2)), ("played", [1.0, 2.0])):
        with pytest.raises(ValueError, match=f"pool.{field}"):
            pool.load_state_dict({**train["pool"], field: value})
    assert pool.snapshots == before[0] and pool.next_slot == before[3]
    assert (pool.wins == before[1]).all() and (pool.played == before[2]).all()
