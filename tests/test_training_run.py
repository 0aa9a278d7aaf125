"""hollywood_gin_trainer.run.TrainingRun: save/resume round trip, a seeded warm start, a pure-torch policy (meta
device), no tensor of the loop made on the wrong device, and hand statistics that the trainer and the evaluator count
alike."""

from __future__ import annotations

import weakref
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.lookahead_planes import LOOKAHEAD_SIZE  # noqa: E402
from hollywood_gin_env.engine.handstats import HandCounts  # noqa: E402
from hollywood_gin_env.engine.observation import OBS_SIZE  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.evaluation.evaluate import duplicate_deals, play_pair, summarize_pair  # noqa: E402
from hollywood_gin_env.rules.actions import NUM_ACTIONS  # noqa: E402
from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.ppo import ActorCritic, Batch, ppo_epochs, ppo_loss, rollout_batch  # noqa: E402
from hollywood_gin_trainer.privileged import privileged_view_size  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun, resolve_device  # noqa: E402

SMOKE = "configs/smoke.toml"


def _run(*overrides: str) -> TrainingRun:
    return TrainingRun.create(load_config(SMOKE, list(overrides)))


def _train(run: TrainingRun, updates: int) -> None:
    for update in range(run.progress.update + 1, run.progress.update + updates + 1):
        run.update(update)
        run.snapshot(update)


def _weights(run: TrainingRun) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in run.model.state_dict().items()}


def _equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    "overrides",
    [
        (),
        ("model.lookahead_features=true",),
        ("model.critic='privileged'", "model.critic_stock_cards=12", "model.critic_playout=true"),
        ("model.critic='privileged'", "model.critic_playout=true", "train.env_threads=2"),
    ],
)
def test_save_and_resume_continue_exactly(tmp_path, overrides):
    run = _run(*overrides)
    run.start()
    _train(run, 2)
    run.save(tmp_path / "last.safetensors")
    resumed = TrainingRun.resume(tmp_path / "last.safetensors")
    assert resumed.started and resumed.progress == run.progress
    assert _equal(_weights(resumed), _weights(run))
    assert len(resumed.pool.snapshots) == len(run.pool.snapshots) == 2
    _train(run, 2)
    _train(resumed, 2)
    assert _equal(_weights(resumed), _weights(run))  # the same matches, samples and minibatches after the resume
    assert resumed.progress.global_step == run.progress.global_step > 0


def test_the_warm_start_is_seeded():
    a, b, c = _run(), _run(), _run("train.seed=1")
    for run in (a, b, c):
        run.start()
    assert a.progress.global_step == 512  # configs/smoke.toml's warmstart.decisions
    assert _equal(_weights(a), _weights(b))
    assert not _equal(_weights(a), _weights(c))


@pytest.mark.parametrize(
    ("critic", "lookahead"),
    [("player", False), ("privileged", False), ("player", True)],
)
def test_the_policy_and_the_ppo_loss_run_on_the_meta_device(critic, lookahead):
    """The forward pass is torch from input to logits: on the meta device (no data) it runs, and so do the loss and
    its backward pass, so nothing in them leaves torch for numpy or numba (the lookahead inputs are made before,
    by `prepare`)."""
    kwargs = {"hidden_sizes": [32], "card_channels": 8, "take_features": True, "lookahead_features": lookahead}
    with torch.device("meta"):
        model = ActorCritic({"name": "cards", "kwargs": kwargs}, critic)
    batch_size = 16
    assert model.policy.input_size == OBS_SIZE + (LOOKAHEAD_SIZE if lookahead else 0)
    obs = torch.empty(batch_size, model.policy.input_size, device="meta")
    privileged = torch.empty(batch_size, privileged_view_size(1, 1), device="meta")
    logits, values = model(obs, privileged)
    assert logits.device.type == values.device.type == "meta"
    assert logits.shape == (batch_size, NUM_ACTIONS) and values.shape == (batch_size,)

    zeros = torch.zeros(batch_size, device="meta")
    batch = Batch(
        obs=obs,
        privileged=privileged,
        masks=torch.ones(batch_size, NUM_ACTIONS, dtype=torch.bool, device="meta"),
        actions=torch.zeros(batch_size, dtype=torch.int64, device="meta"),
        logprobs=zeros,
        values=zeros,
        advantages=zeros,
        returns=zeros,
    )
    run_config = load_config(SMOKE)
    loss, stats = ppo_loss(model, batch, torch.arange(batch_size, device="meta"), run_config.ppo, 0.01)
    loss.backward()
    assert loss.device.type == "meta" and all(s.device.type == "meta" for s in stats.values())
    assert all(p.grad is not None and p.grad.device.type == "meta" for p in model.parameters())


class DeviceDiscipline(TorchFunctionMode):
    """Simulates a second device on the CPU: tensors made by `.to(device)`, by a factory given `device=`, or computed
    from such tensors are "on the device"; tensors from numpy are "on the host". Mixing the two in one operation (as
    CUDA refuses to do), or a factory without an explicit device, is recorded. 0-dim tensors mix freely, as in CUDA."""

    CROSSING = {"to", "cpu", "numpy", "item", "tolist", "__get__"}

    def __init__(self, device_tensors) -> None:
        super().__init__()
        self.on_device: dict[int, weakref.ref] = {}  # by identity: tensors compare element-wise
        self.problems: list[str] = []
        self._mark(list(device_tensors))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        result = func(*args, **kwargs)
        tensors = [t for t in _tensors(args) + _tensors(kwargs.values()) if t.dim() > 0]
        device_side = [self._is_on_device(t) for t in tensors]
        if name in ("to", "cuda"):
            self._mark(result)
        elif name in self.CROSSING:
            pass
        elif not tensors:  # a factory
            if "device" not in kwargs and isinstance(result, torch.Tensor) and result.dim() > 0:
                self.problems.append(f"{name}() without device=")
            self._mark(result)
        elif all(device_side):
            self._mark(result)
        elif any(device_side):
            self.problems.append(f"{name}() mixes host and device tensors")
        return result

    def _mark(self, value) -> None:
        for t in _tensors([value]):
            self.on_device[id(t)] = weakref.ref(t)

    def _is_on_device(self, tensor: torch.Tensor) -> bool:
        ref = self.on_device.get(id(tensor))
        return ref is not None and ref() is tensor


def _tensors(values) -> list[torch.Tensor]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out += _tensors(v)
    return out


def test_no_tensor_of_the_rollout_or_the_loss_is_made_on_the_wrong_device():
    """With a GPU, every tensor the loop makes must be on the run's device: checked here by `DeviceDiscipline`
    (CUDA's rule on a simulated device), over a rollout against every kind of opponent, the batch and the loss."""
    run = _run("selfplay.opponents={self=0.2, snapshots=0.4, expert=0.2, greedy=0.2}")
    run.start()
    run.pool.add(run.model.policy, 0)  # a snapshot opponent too
    parameters = [*run.model.parameters(), *(p for s in run.pool.snapshots for p in s.parameters())]
    mode = DeviceDiscipline(parameters)
    with mode:
        batch = rollout_batch(run.arena, run.model, run.config.ppo)
        _, stats = ppo_loss(run.model, batch, torch.arange(len(batch), device=run.device), run.config.ppo, 0.01)
    assert (run.arena.kind != run.arena.lineup.self_code).any() and len(batch) > 0
    assert not mode.problems, sorted(set(mode.problems))
    # the check does catch a tensor left on the host
    with DeviceDiscipline(parameters) as strict:
        run.model(torch.from_numpy(np.zeros((2, OBS_SIZE), dtype=np.float32)))
    assert any("mixes" in p for p in strict.problems)


def test_cuda_without_a_gpu_is_one_clear_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the error is for machines without one")
    with pytest.raises(ValueError, match="torch sees no CUDA device; use --device cpu"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="not a torch device name"):
        resolve_device("gpu0")


def test_hand_statistics_agree_between_the_trainer_and_the_evaluator():
    """The same matches (duplicate deals, greedy against expert) played through the trainer's arena and through
    hollywood_gin_env.evaluation.evaluate give the same counts of hands, gins, knocks, undercuts and dead hands."""
    matches, seed = 8, 4
    record = play_pair(load_agent("greedy"), load_agent("expert"), matches, seed=seed)
    summary = summarize_pair(record)

    deal_seeds, dealers, seat_a = duplicate_deals(matches, seed)
    env = SelfPlayVectorEnv(matches)
    env.reset(seed=0)
    env.engine.new_matches(seeds=deal_seeds, first_dealers=dealers)  # the evaluator's deals
    obs = env.observe(env.engine.current_player)
    players = env.engine.current_player.copy()
    counts, finished = HandCounts(), np.zeros(matches, dtype=bool)
    greedy, expert = load_agent("greedy"), load_agent("expert")
    while not finished.all():
        actions = np.where(
            players == seat_a,
            greedy.act(obs["observation"], obs["action_mask"]),
            expert.act(obs["observation"], obs["action_mask"]),
        )
        actions[finished] = np.argmax(obs["action_mask"][finished], axis=1)
        obs, _, _, _, infos = env.step(actions)
        live = ~finished & infos["hand_over"]
        counts.add(
            infos["hand_kind"][live], infos["hand_knocker"][live], infos["hand_winner"][live], infos["hand_turns"][live]
        )
        finished |= infos["match_winner"] >= 0
        players = infos["current_player"]
    rates = counts.rates()
    assert counts.hands == summary["hands"]
    assert rates["dead_rate"] == pytest.approx(summary["dead_hand_rate"])
    assert rates["gin_rate"] == pytest.approx(sum(summary["gin_rate"]))
    assert rates["knock_rate"] == pytest.approx(sum(summary["knock_rate"]))
    assert rates["undercut_rate"] == pytest.approx(sum(summary["undercut_rate"]))
    assert rates["turns_per_hand"] == pytest.approx(summary["turns_per_hand"])


def test_one_masked_sampler():
    """Sampling, masking and the softmax over actions are written once (hollywood_gin_env/agents/masked.py); the
    learner, the arena, the pool and PolicyAgent (its actions and its probabilities, which the hints show) all
    call it."""
    root = Path(__file__).resolve().parents[1]
    sources = [*root.glob("hollywood_gin_trainer/*.py"), *root.glob("hollywood_gin_env/**/*.py"), *root.glob("*.py")]
    home = root / "hollywood_gin_env" / "agents" / "masked.py"
    for path in sources:
        text = path.read_text(encoding="utf-8")
        if path == home:
            continue
        for needle in ("multinomial(", "softmax(", "gumbel("):
            assert needle not in text, f"{path.relative_to(root)} samples or masks actions itself ({needle})"
    users = (
        "hollywood_gin_trainer/ppo.py",
        "hollywood_gin_trainer/pool.py",
        "hollywood_gin_trainer/warmstart.py",
        "hollywood_gin_env/agents/policy.py",
    )
    for name in users:
        assert "hollywood_gin_env.agents.masked import" in (root / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize(("target_kl", "stops"), [(0.0, False), (1e-12, True)])
def test_the_update_reports_the_rows_of_every_gradient_step_it_took(target_kl, stops):
    """ppo_epochs' rows_trained counts each row once per epoch that reached it: every epoch's rows without the
    target-KL stop; with a stop at any KL, the first minibatch or two (the first runs at the rollout's own weights,
    where the KL is zero up to rounding)."""
    run = _run(f"ppo.target_kl={target_kl}", "ppo.epochs=3", "ppo.minibatch_size=64")
    run.start()
    batch = rollout_batch(run.arena, run.model, run.config.ppo)
    losses = ppo_epochs(run.model, run.optimizer, batch, run.config.ppo, 0.01, run.generator)
    assert losses["early_stop"] == float(stops)
    assert len(batch) > 128  # more than two minibatches: the stop had rows left to skip
    assert losses["rows_trained"] in ((64, 128) if stops else (3 * len(batch),))


def test_constructing_a_run_changes_no_process_wide_state():
    """torch's threads and random state, numpy's and Python's global streams and the kernel threads' default are
    the program's: creating and starting a run leaves them as they were, and its initial weights still come from
    train.seed alone."""
    import random

    from hollywood_gin_env.engine import threads

    before = (torch.get_num_threads(), torch.get_rng_state(), np.random.get_state()[1], random.getstate())
    default = threads.default_threads()
    run = _run("train.torch_threads=7", "train.env_threads=3")
    run.start()
    after = (torch.get_num_threads(), torch.get_rng_state(), np.random.get_state()[1], random.getstate())
    assert after[0] == before[0] and torch.equal(after[1], before[1]) and (after[2] == before[2]).all()
    assert after[3] == before[3] and threads.default_threads() == default
    torch.manual_seed(12345)  # whatever the process's stream holds, the weights are the seed's
    assert _equal(_weights(_run()), _weights(_run()))


# --- a damaged training state -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A smoke run's training state after two updates (Adam has moments, the pool its 2 snapshots)."""
    run = _run("warmstart.decisions=0")
    run.start()
    _train(run, 2)
    path = tmp_path_factory.mktemp("run") / "last.safetensors"
    run.save(path)
    return path


def _first(tensors, kind="exp_avg"):
    return tensors[f"train/optimizer.0.{kind}"]


def _set(mapping, key, value):
    mapping[key] = value


DAMAGES = {  # name: (damage(tensors, train), what the message names)
    "Adam eps=1e-320": (lambda t, m: _set(m["optimizer"]["param_groups"][0], "eps", 1e-320), "eps=1e-320"),
    "Adam weight_decay=1e300": (
        lambda t, m: _set(m["optimizer"]["param_groups"][0], "weight_decay", 1e300),
        "weight_decay=1e+300: this run's Adam has 0",
    ),
    "Adam betas": (lambda t, m: _set(m["optimizer"]["param_groups"][0], "betas", [1.5, 0.999]), "betas=[1.5, 0.999]"),
    "Adam lr above train.lr": (lambda t, m: _set(m["optimizer"]["param_groups"][0], "lr", 0.5), "lr=0.5: the"),
    "Adam amsgrad": (lambda t, m: _set(m["optimizer"]["param_groups"][0], "amsgrad", True), "amsgrad=True"),
    "exp_avg=1e30": (lambda t, m: _first(t).fill(1e30), "optimizer.0.exp_avg: values must be finite and lie in"),
    "exp_avg NaN": (lambda t, m: _first(t).fill(np.nan), "optimizer.0.exp_avg: values must be finite"),
    "exp_avg_sq negative": (lambda t, m: _first(t, "exp_avg_sq").fill(-1.0), "optimizer.0.exp_avg_sq: values must"),
    "Adam steps that differ": (lambda t, m: t["train/optimizer.3.step"].fill(1.0), "optimizer.3.step=1: one whole"),
    "Adam step beyond the updates": (lambda t, m: _first(t, "step").fill(1e9), "optimizer.0.step=1e+09"),
    "exp_avg of another shape": (
        lambda t, m: _set(t, "train/optimizer.0.exp_avg", np.zeros(3, np.float32)),
        "tensor 'train/optimizer.0.exp_avg' is float32 (3,); expected float32",
    ),
    "model weights of 1e30": (lambda t, m: t["torso.0.weight"].fill(1e30), "torso.0.weight: values must be finite"),
    "value head NaN": (lambda t, m: t["train/model.value_head.weight"].fill(np.nan), "model.value_head.weight"),
    "snapshot NaN": (lambda t, m: t["train/pool.1.torso.0.weight"].fill(np.nan), "pool.1.torso.0.weight"),
    "global_step=2**63": (lambda t, m: _set(m["progress"], "global_step", 2**63), "progress.global_step=9223372"),
    "global_step beyond the updates": (lambda t, m: _set(m["progress"], "global_step", 10**9), "train on at most"),
    "update beyond train.updates": (lambda t, m: _set(m["progress"], "update", 5), "progress.update=5: the run has"),
    "update of 10**9": (lambda t, m: _set(m["progress"], "update", 10**9), "progress.update=1000000000"),
    "update a string": (lambda t, m: _set(m["progress"], "update", "2"), "progress.update='2'"),
    "wall time NaN": (lambda t, m: _set(m["progress"], "wall_seconds", float("nan")), "progress.wall_seconds=nan"),
    "best_lower 7": (lambda t, m: _set(m["progress"], "best_lower", 7.0), "progress.best_lower=7.0"),
    "history entry NaN": (lambda t, m: _set(m["progress"], "history", [{"update": float("nan")}]), "history"),
    "20,000 snapshots": (lambda t, m: _set(m["pool"], "updates", [1] * 20_000), "pool.updates: 20000 snapshots"),
    "pool next_slot": (lambda t, m: _set(m["pool"], "next_slot", 99), "pool.next_slot=99"),
    "pool wins above played": (lambda t, m: t["train/pool.wins"].fill(5.0), "pool.wins: more wins than matches"),
    "engine pile index": (lambda t, m: t["train/arena.engine.pile"].fill(10**6), "engine state field 'pile'"),
    "arena opponent": (lambda t, m: t["train/arena.kind"].fill(4), "arena.kind: values must be finite and lie in 0..3"),
    "arena opponents": (
        lambda t, m: _set(m["arena"], "opponents", ["self", "random"]),
        "arena.opponents=['self', 'random']: the matches were drawn against other opponents",
    ),
    "arena deal NaN": (lambda t, m: t["train/arena.deal"].fill(np.nan), "arena.deal: values must be finite"),
    "numpy stream": (lambda t, m: _set(m["rng"], "numpy", {"bit_generator": "PCG64"}), "rng.numpy: not the state"),
    "a tensor missing": (lambda t, m: t.pop("train/pool.wins"), "tensors missing 'train/pool.wins'"),
    "saved config": (lambda t, m: _set(m["config"]["train"], "lr", -1), "the saved config: train.lr=-1"),
    "a device that is no device type": (
        lambda t, m: _set(m, "device", "\x1b]0;PWNED\x07cuda"),
        "device='\\x1b]0;PWNED\\x07cuda': expected one of cpu, cuda",
    ),
    "a warm start record in a started run": (
        lambda t, m: _set(m, "warmstart", {"epoch": 0, "batch": 0}),
        "this run's config has no cloning to continue",
    ),
}


@pytest.fixture(scope="module")
def saved_warm(tmp_path_factory):
    """A smoke run's training state saved in its warm start: 3 epochs of 4 minibatches, stopped before the second
    epoch's third minibatch."""
    run = _run("warmstart.epochs=3")
    asked = []
    assert not run.start(stop=lambda: asked.append(1) or len(asked) > 6)
    path = tmp_path_factory.mktemp("warm") / "last.safetensors"
    run.save(path)
    return path


WARM_DAMAGES = {  # name: (damage(tensors, train), what the message names)
    "epoch beyond [warmstart]": (lambda t, m: _set(m["warmstart"], "epoch", 3), "warmstart.epoch=3: a warm start's"),
    "minibatch beyond an epoch's": (lambda t, m: _set(m["warmstart"], "batch", 4), "warmstart.batch=4: a warm"),
    "Adam steps other than the minibatches": (
        lambda t, m: t["train/warmstart.optimizer.0.step"].fill(2.0),
        "warmstart.optimizer.0.step=2: the cloning took 6 minibatches",
    ),
    "Adam moments of 1e30": (
        lambda t, m: t["train/warmstart.optimizer.1.exp_avg"].fill(1e30),
        "warmstart.optimizer.1.exp_avg: values must be finite",
    ),
    "more right answers than rows": (
        lambda t, m: t["train/warmstart.totals"].fill(1e6),
        "warmstart.totals: 1e+06 right answers in the 256 decisions cloned this epoch",
    ),
    "an update done": (lambda t, m: _set(m["progress"], "update", 1), "a run saved in its warm start has done no"),
    "no cloning record": (lambda t, m: m.pop("warmstart"), "tensors missing 'train/arena"),
}


@pytest.mark.parametrize("case", list(WARM_DAMAGES))
def test_a_damaged_warm_start_state_is_refused_in_one_line_naming_the_value(saved_warm, tmp_path, case):
    """A state saved in the warm start is held to the config's warm start: the epoch and minibatch within it, the
    cloning's Adam at that many steps and within clipped gradients' bounds, its totals within the rows cloned."""
    damage, fragment = WARM_DAMAGES[case]
    with pytest.raises(ValueError) as error:
        TrainingRun.resume(_damaged(saved_warm, tmp_path / "last.safetensors", damage))
    assert fragment in str(error.value) and "\n" not in str(error.value), error.value


def _damaged(saved: Path, out: Path, damage) -> Path:
    """A copy of the training state `saved` with damage(tensors, metadata["train"]) done to it."""
    from hollywood_gin_env.support.tensorfile import read_tensor_header, read_tensors, write_tensor_file

    header = read_tensor_header(saved)
    tensors = {name: np.array(array) for name, array in read_tensors(saved, header.tensors).items()}
    damage(tensors, header.metadata["train"])
    write_tensor_file(out, tensors, header.metadata)
    return out


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_damaged_training_state_is_refused_at_resume_in_one_line_naming_the_value(saved, tmp_path, case):
    """Each value out of its range (Adam's settings against the run's, its moments against what clipped gradients
    make, weights, counters against the config, the pool, the matches, the streams) is refused before anything runs,
    in one line naming the file and the value."""
    damage, fragment = DAMAGES[case]
    bad = _damaged(saved, tmp_path / "last.safetensors", damage)
    with pytest.raises(ValueError) as error:
        TrainingRun.resume(bad)
    message = str(error.value)
    assert fragment in message and str(bad) in message and "\n" not in message, message


def test_the_undamaged_state_resumes_and_trains_on(saved, tmp_path):
    """Fixed (here: written back as it was read), a refused file resumes and the run goes on."""
    again = _damaged(saved, tmp_path / "last.safetensors", lambda tensors, train: None)
    run = TrainingRun.resume(again)
    _train(run, 1)
    assert run.progress.update == 3 and len(run.pool.snapshots) == 2


# --- Ray workers: bounded by the machine, started for a checked state only --------------------------------------------


def test_a_state_naming_ray_workers_is_checked_whole_before_any_worker_starts(saved, tmp_path, monkeypatch):
    """A one-worker state whose config is made to name two workers is refused as damaged (its matches are not two
    workers' shares) before Ray or any worker starts."""
    ray_tasks = pytest.importorskip("hollywood_gin_env.evaluation.ray_tasks")
    monkeypatch.setattr(ray_tasks, "start_ray", lambda *a, **k: pytest.fail("Ray started for a refused file"))
    forged = _damaged(saved, tmp_path / "last.safetensors", lambda t, m: _set(m["config"]["train"], "workers", 2))
    with pytest.raises(ValueError, match="the training state is damaged: tensors missing 'train/arena.0."):
        TrainingRun.resume(forged)


def test_ray_workers_are_bounded_by_the_cpus_and_the_memory_of_the_machine(tmp_path, monkeypatch, capsys):
    """A local Ray holds one worker per CPU and one per WORKER_BYTES available: train.workers or evaluate --workers
    above that is one line naming the value and the bound, before anything starts; a cluster's address lifts it."""
    from hollywood_gin_env.evaluation import duplicate, evaluate
    from hollywood_gin_env.evaluation.duplicate import WORKER_BYTES, check_local_workers
    from hollywood_gin_trainer import main as train

    monkeypatch.setattr(duplicate, "available_cpus", lambda: 4)
    monkeypatch.setattr(duplicate, "available_memory", lambda: 3 * WORKER_BYTES + 1)
    check_local_workers(3, "train.workers")
    with pytest.raises(ValueError, match=r"^train.workers=4: a local Ray on this machine holds at most 3 workers \("):
        check_local_workers(4, "train.workers")
    monkeypatch.setattr(duplicate, "available_memory", lambda: None)  # a system that does not say: the CPUs alone
    check_local_workers(4, "train.workers")
    monkeypatch.setattr(TrainingRun, "create", classmethod(lambda *a, **k: pytest.fail("a run started")))
    with pytest.raises(SystemExit, match=r"error: train.workers=5: a local Ray on this machine holds at most 4"):
        train.main(["--config", SMOKE, "--set", "train.workers=5", "--run-dir", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "expert", "greedy", "--workers", "5", "--matches", "2"])
    assert "error: --workers=5: a local Ray on this machine holds at most 4 workers" in capsys.readouterr().err
