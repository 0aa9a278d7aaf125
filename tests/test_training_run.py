"""hollywood_gin_trainer.run.TrainingRun: save/resume round trip, a seeded warm start, a pure-torch policy (meta
device), no tensor of the loop made on the wrong device, and hand statistics that the trainer and the evaluator count
alike."""

from __future__ import annotations

import signal
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
from hollywood_gin_trainer.ppo import ActorCritic, Batch, ppo_loss, ppo_update  # noqa: E402
from hollywood_gin_trainer.privileged import privileged_view_size  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun, resolve_device  # noqa: E402

SMOKE = "configs/smoke.toml"


def _run(*overrides: str) -> TrainingRun:
    return TrainingRun.create(load_config(SMOKE, list(overrides)))


def _train(run: TrainingRun, updates: int) -> None:
    for update in range(run.progress.update + 1, run.progress.update + updates + 1):
        _, ent_coef = run.schedule(update)
        run.learn(run.collect(), ent_coef)
        run.progress.update = update
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
    run.save(tmp_path / "last.pt")
    resumed = TrainingRun.resume(tmp_path / "last.pt")
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
    config = {
        "hidden_sizes": [32],
        "card_channels": 8,
        "take_features": True,
        "lookahead_features": lookahead,
    }
    with torch.device("meta"):
        model = ActorCritic(config, critic)
    batch_size = 16
    assert model.policy.input_size == OBS_SIZE + (LOOKAHEAD_SIZE if lookahead else 0)
    obs = torch.empty(batch_size, model.policy.input_size, device="meta")
    privileged = torch.empty(batch_size, privileged_view_size(1), device="meta")
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
    run = _run("selfplay.snapshot_weight=0.4", "selfplay.expert_weight=0.2", "selfplay.greedy_weight=0.2")
    run.start()
    run.pool.add(run.model.policy, 0)  # a snapshot opponent too
    parameters = [*run.model.parameters(), *(p for s in run.pool.snapshots for p in s.parameters())]
    mode = DeviceDiscipline(parameters)
    with mode:
        batch = run.collect()
        _, stats = ppo_loss(run.model, batch, torch.arange(len(batch), device=run.device), run.config.ppo, 0.01)
    assert (run.arena.opponent >= 0).any() and len(batch) > 0
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
        "hollywood_gin_trainer/arena.py",
        "hollywood_gin_trainer/pool.py",
        "hollywood_gin_trainer/warmstart.py",
        "hollywood_gin_env/agents/policy.py",
    )
    for name in users:
        assert "hollywood_gin_env.agents.masked import" in (root / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: t["arena"]["opponent"].fill_(99), "arena.opponent: values must lie in -1.."),
        (lambda t: t["arena"]["learner_seat"].fill_(5), "arena.learner_seat: values must lie in 0..1"),
        (lambda t: t["arena"]["deal"].fill_(float("nan")), "arena.deal: values must be finite"),
        (lambda t: t["arena"].__setitem__("deal", torch.zeros(3)), "arena.deal: expected a float64 tensor"),
        (lambda t: t["arena"]["engine"].__setitem__("bogus", torch.zeros(3)), "arena.engine: expected the engine"),
        (lambda t: t["model"].pop(next(iter(t["model"]))), "model does not fit the run's model: parameters"),
        (lambda t: t.__setitem__("progress", {"bogus": 1}), "progress: expected the fields"),
        (lambda t: t.pop("optimizer"), "the training state is damaged (KeyError"),
    ],
)
def test_a_damaged_training_state_is_one_clear_error(tmp_path, damage, message):
    run = _run()
    run.start()
    run.save(tmp_path / "last.pt")
    data = torch.load(tmp_path / "last.pt", weights_only=True)
    damage(data["train"])
    torch.save(data, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match=None) as error:
        TrainingRun.resume(tmp_path / "bad.pt")
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_failing_evaluation_never_costs_the_training_before_it(tmp_path, monkeypatch):
    """train.py writes last.pt before each evaluation: if the evaluation fails, the updates before it are saved."""
    from hollywood_gin_trainer import main as train

    def broken(self):
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(TrainingRun, "evaluate", broken)
    sigint = signal.getsignal(signal.SIGINT)  # train.main installs its Ctrl-C handler
    try:
        with pytest.raises(RuntimeError, match="evaluation failed"):
            train.main(["--config", SMOKE, "--run-dir", str(tmp_path / "run"), "--no-progress"])
    finally:
        signal.signal(signal.SIGINT, sigint)
    saved = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    assert saved["train"]["progress"]["update"] == 2  # configs/smoke.toml evaluates every 2 updates
    assert not (tmp_path / "run" / ".run.lock").exists()  # and the directory is free again


@pytest.mark.parametrize(("target_kl", "stops"), [(0.0, False), (1e-12, True)])
def test_the_update_reports_the_rows_of_every_gradient_step_it_took(target_kl, stops):
    """ppo_update's rows_trained counts each row once per epoch that reached it: every epoch's rows without the
    target-KL stop; with a stop at any KL, the first minibatch or two (the first runs at the rollout's own weights,
    where the KL is zero up to rounding)."""
    run = _run(f"ppo.target_kl={target_kl}", "ppo.epochs=3", "ppo.minibatch_size=64")
    run.start()
    batch = run.collect()
    losses = ppo_update(run.model, run.optimizer, batch, run.config.ppo, 0.01, run.generator)
    assert losses["early_stop"] == float(stops)
    assert len(batch) > 128  # more than two minibatches: the stop had rows left to skip
    assert losses["rows_trained"] in ((64, 128) if stops else (3 * len(batch),))
