"""train.compile: the rollout's forward pass through torch.compile gives the eager pass's logits and values for any
batch size, padded fixed-shape batches return only the rows given, and a compiled training run trains the same
weights on 1 and 2 kernel threads and resumes exactly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents.checkpoint import load_checkpoint  # noqa: E402
from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.forward import RolloutForward, pad_rows  # noqa: E402
from hollywood_gin_trainer.ppo import ActorCritic, make_learner  # noqa: E402
from hollywood_gin_trainer.privileged import privileged_view_size  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMALL = [  # the recipe's network (cards, lookahead inputs, privileged critic), narrow: quick to compile
    "model.hidden_sizes=[32]",
    "model.card_channels=8",
    "model.critic_stock_cards=3",
]


@pytest.fixture
def compile_calls(monkeypatch):
    """Every torch.compile call's keyword arguments, the calls themselves passed through."""
    calls: list[dict] = []
    real = torch.compile

    def spy(model, **kwargs):
        calls.append(kwargs)
        return real(model, **kwargs)

    monkeypatch.setattr(torch, "compile", spy)
    return calls


def _model_and_rows(count: int, seed: int = 0) -> tuple[ActorCritic, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    model = make_learner(load_config("configs/default.toml", SMALL), torch.device("cpu"))[0].eval()
    obs = torch.rand(count, model.policy.input_size)
    privileged = torch.rand(count, privileged_view_size(3, 4))  # the recipe's four opponents
    return model, obs, privileged


@pytest.mark.slow
def test_the_compiled_rollout_forward_gives_the_eager_outputs_for_every_batch_size(compile_calls):
    """Compiled with a dynamic batch size (the CPU's way), the forward pass returns the eager logits and values for
    batches of 1 to 64 rows, compiling once per model, without padding."""
    model, obs, privileged = _model_and_rows(64)
    forward = RolloutForward(True, "cpu", rows=64)
    assert forward.pad_to is None
    for count in (1, 2, 5, 17, 64):
        logits, values = forward(model, obs[:count], privileged[:count])
        with torch.no_grad():
            want_logits, want_values = model(obs[:count], privileged[:count])
        assert logits.shape == want_logits.shape and values.shape == want_values.shape
        torch.testing.assert_close(logits, want_logits, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(values, want_values, rtol=1e-5, atol=1e-5)
    assert compile_calls == [{"dynamic": True}]
    assert not logits.requires_grad  # the rollout keeps no graph


@pytest.mark.slow
def test_a_fixed_shape_forward_pads_to_the_match_count_and_returns_only_the_rows_given(compile_calls):
    """With fixed shapes (CUDA graphs' way) every batch is padded with zero rows to the match count, compiled once
    for that one shape; the rows given get the eager outputs and the padded rows are dropped."""
    model, obs, privileged = _model_and_rows(16, seed=1)
    forward = RolloutForward(True, "cpu", rows=16, fixed_shape=True)
    assert forward.pad_to == 16
    for count in (3, 16, 9):
        logits, values = forward(model, obs[:count], privileged[:count])
        with torch.no_grad():
            want_logits, want_values = model(obs[:count], privileged[:count])
        assert logits.shape == (count, want_logits.shape[1]) and values.shape == (count,)
        torch.testing.assert_close(logits, want_logits, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(values, want_values, rtol=1e-5, atol=1e-5)
    assert compile_calls == [{"mode": None, "dynamic": False}]


def test_an_eager_rollout_forward_compiles_nothing(compile_calls):
    """train.compile = false (the default): the model's own forward pass, nothing compiled."""
    model, obs, privileged = _model_and_rows(4)
    logits, values = RolloutForward(False, "cpu", rows=4)(model, obs, privileged)
    with torch.no_grad():
        want_logits, want_values = model(obs, privileged)
    assert torch.equal(logits, want_logits) and torch.equal(values, want_values)
    assert compile_calls == []


def test_padding_adds_zero_rows_and_refuses_more_rows_than_the_fixed_shape():
    """pad_rows keeps the rows, adds zero rows up to the count, and names both counts when given too many."""
    rows = torch.arange(6.0).reshape(3, 2)
    padded = pad_rows(rows, 5)
    assert padded.shape == (5, 2) and torch.equal(padded[:3], rows) and not padded[3:].any()
    assert pad_rows(rows, 3) is rows
    with pytest.raises(ValueError, match="4 rows: more than the 3"):
        pad_rows(torch.zeros(4, 2), 3)


def test_train_compile_must_be_a_boolean():
    """train.compile = "yes" or 1 is refused by name."""
    for value in ("'yes'", "1"):
        with pytest.raises(ValueError, match="train.compile=.* is not allowed: input should be a valid boolean"):
            load_config("configs/smoke.toml", [f"train.compile={value}"])


@pytest.mark.slow
def test_a_compiled_training_run_trains_bit_identical_weights_on_1_and_2_env_threads(
    compile_calls,
):
    """train.compile = true gives the same weights, optimizer state, losses and evaluations on 1 and 2 kernel
    threads (the tiny recipe fingerprint), and the rollout's forward pass was compiled."""
    spec = importlib.util.spec_from_file_location("recipe_fingerprint", ROOT / "scripts" / "recipe_fingerprint.py")
    fingerprint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fingerprint)
    one = fingerprint.fingerprint(tiny=True, env_threads=1, compiled=True)
    assert compile_calls  # the learner's rollout forward went through torch.compile
    two = fingerprint.fingerprint(tiny=True, env_threads=2, compiled=True)
    assert two == one


@pytest.mark.slow
def test_a_compiled_run_saves_plain_weights_and_resumes_exactly(tmp_path):
    """A compiled run's training state loads as a plain policy checkpoint with the run's weights, and the resumed
    run, compiling again, continues with the same weights as the run that went on."""
    overrides = ["train.compile=true", "train.updates=4"]

    def train(run: TrainingRun, updates: int) -> None:
        for update in range(run.progress.update + 1, run.progress.update + updates + 1):
            run.update(update)

    run = TrainingRun.create(load_config("configs/smoke.toml", overrides))
    run.start()
    train(run, 1)
    run.save(tmp_path / "last.safetensors")
    policy, _ = load_checkpoint(tmp_path / "last.safetensors")  # a plain policy checkpoint: load_agent plays it
    for name, tensor in run.model.policy.state_dict().items():
        assert torch.equal(policy.state_dict()[name], tensor), name
    resumed = TrainingRun.resume(tmp_path / "last.safetensors")
    train(run, 2)
    train(resumed, 2)
    for name, tensor in run.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], tensor), name


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (benchmarks/gpu_check.sh runs it there)")
def test_the_cuda_graph_forward_returns_the_eager_outputs_and_keeps_earlier_ones(compile_calls):
    """On CUDA the compiled pass runs as CUDA graphs over batches padded to the match count: each batch's rows get
    the eager outputs, and a later replay does not overwrite what an earlier call returned."""
    model, obs, privileged = _model_and_rows(16, seed=2)
    model, obs, privileged = model.cuda(), obs.cuda(), privileged.cuda()
    forward = RolloutForward(True, "cuda", rows=16)
    assert forward.pad_to == 16
    returned = []
    for count in (3, 16, 9, 3):
        logits, values = forward(model, obs[:count], privileged[:count])
        returned.append((count, logits, values))
    for count, logits, values in returned:
        with torch.no_grad():
            want_logits, want_values = model(obs[:count], privileged[:count])
        torch.testing.assert_close(logits, want_logits, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(values, want_values, rtol=1e-4, atol=1e-4)
    assert compile_calls == [{"mode": "reduce-overhead", "dynamic": False}]


def test_a_run_whose_forward_pass_cannot_compile_stops_at_creation_naming_the_option(monkeypatch):
    """Where torch.compile fails (here: made to fail), creating a train.compile run raises one error naming
    train.compile and the way out, before any warm start or rollout."""

    def broken(model, **kwargs):
        def fail(*args):
            raise OSError("no C++ compiler found\nsecond line")

        return fail

    monkeypatch.setattr(torch, "compile", broken)
    with pytest.raises(RuntimeError, match=r"train.compile=true: torch.compile failed on this machine \(OSError: no C"):
        TrainingRun.create(load_config("configs/smoke.toml", ["train.compile=true"]))
