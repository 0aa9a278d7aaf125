"""Torch's threads while an agent acts: the Python API (load_agent, round_robin, evaluate_pairs, play_pair, the envs)
and the command line (`evaluate`, `--threads N`) run the agents' networks on the same count, DEFAULT_TORCH_THREADS
unless told, whatever the process's own count; the process's count is back as it was once they return."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import DEFAULT_TORCH_THREADS, load_agent  # noqa: E402
from hollywood_gin_env.agents.torch_threads import MAX_TORCH_THREADS, check_torch_threads  # noqa: E402
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv  # noqa: E402
from hollywood_gin_env.evaluation import evaluate  # noqa: E402
from hollywood_gin_env.evaluation.evaluate import Schedule, evaluate_pairs, play_pair, round_robin  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402

SHORT = Rules(game_target=30)
BOT_ARGV = ["--agents", "bot", "random", "--matches", "2", "--no-progress"]
PROCESS_THREADS = 3  # the process's own count in these tests: neither the default nor a count the tests ask for


@pytest.fixture
def process_threads() -> Iterator[None]:
    """torch on PROCESS_THREADS threads in this process for the test, its count restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(PROCESS_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def counts_while_networks_run() -> Iterator[set[int]]:
    """The torch thread counts seen at every forward pass of any torch module while the block runs."""
    seen: set[int] = set()
    handle = torch.nn.modules.module.register_module_forward_pre_hook(
        lambda module, inputs: seen.add(torch.get_num_threads())
    )
    try:
        yield seen
    finally:
        handle.remove()


def test_the_api_and_the_command_line_act_on_the_same_torch_threads(process_threads, capsys):
    """round_robin with its defaults and `evaluate` without --threads run the bot's network on DEFAULT_TORCH_THREADS
    (not the process's count), and leave the process's count as it was."""
    with counts_while_networks_run() as api:
        round_robin(["bot", "random"], 2, rules=SHORT)
    assert torch.get_num_threads() == PROCESS_THREADS
    with counts_while_networks_run() as cli:
        assert evaluate.main(BOT_ARGV) == 0
    capsys.readouterr()
    assert api == cli == {DEFAULT_TORCH_THREADS} and torch.get_num_threads() == PROCESS_THREADS


def test_a_count_asked_for_is_the_count_in_every_front_end(process_threads, capsys):
    """--threads 2, Schedule(torch_threads=2), play_pair(torch_threads=2), load_agent(torch_threads=2) and the envs'
    torch_threads=2: the network runs on 2 threads in each."""
    runs = {
        "cli": lambda: evaluate.main([*BOT_ARGV, "--threads", "2"]),
        "evaluate_pairs": lambda: evaluate_pairs([("bot", "random")], 2, schedule=Schedule(torch_threads=2)),
        "play_pair": lambda: play_pair("bot", "random", 2, rules=SHORT, torch_threads=2),
        "load_agent": lambda: play_pair(load_agent("bot", torch_threads=2), "random", 2, rules=SHORT),
        "env": lambda: first_steps(HollywoodGinEnv(opponent="bot", torch_threads=2, learner_seat=1)),
        "vector_env": lambda: first_steps(HollywoodGinVectorEnv(2, opponent="bot", torch_threads=2, learner_seat=1)),
    }
    for name, run in runs.items():
        with counts_while_networks_run() as seen:
            run()
        assert seen == {2}, name
        assert torch.get_num_threads() == PROCESS_THREADS, name
    capsys.readouterr()


def first_steps(env) -> None:
    """Reset the env (the opponent, in seat 0, may act first) and play a few first-legal actions."""
    obs, _ = env.reset(seed=0)
    for _ in range(4):
        masks = np.atleast_2d(obs["action_mask"])
        actions = masks.argmax(axis=1)
        obs, *_ = env.step(actions if masks.shape[0] > 1 else int(actions[0]))


def test_a_users_torch_agent_in_the_evaluator_acts_on_the_evaluators_count(process_threads, capsys):
    """An agent of the user's that runs torch itself (module:attr) acts on the evaluator's count too."""
    agent = "tests.agents_for_tests:TorchFirstLegal"
    with counts_while_networks_run() as api:
        round_robin([agent, "random"], 2, rules=SHORT)
    with counts_while_networks_run() as cli:
        assert evaluate.main(["--agents", agent, "random", "--matches", "2", "--no-progress"]) == 0
    capsys.readouterr()
    assert api == cli == {DEFAULT_TORCH_THREADS}


def test_a_policy_built_without_a_count_leaves_torch_as_the_process_has_it(process_threads):
    """PolicyAgent(torch_threads=None), as a trainer builds one for its own network: torch keeps the process's count
    (the trainer's), while load_agent's agents act on DEFAULT_TORCH_THREADS."""
    from hollywood_gin_env.agents.policy import PolicyAgent

    bot = load_agent("bot")
    own = PolicyAgent(bot.policy)
    with counts_while_networks_run() as seen:
        play_pair(own, "random", 2, rules=SHORT, torch_threads=PROCESS_THREADS)
    assert seen == {PROCESS_THREADS} and bot.torch_threads == DEFAULT_TORCH_THREADS and own.torch_threads is None


@pytest.mark.parametrize("bad", [0, MAX_TORCH_THREADS + 1, 1.5, True, "2"])
def test_a_torch_thread_count_outside_1_to_256_is_refused_by_name(bad):
    """check_torch_threads (load_agent's, the envs', Schedule's) refuses 0, 257, floats, bools and text by name."""
    with pytest.raises(ValueError, match=rf"^torch_threads={bad!r} is not allowed: use an integer from 1 to 256"):
        check_torch_threads(bad)
    with pytest.raises(ValueError, match="torch_threads="):
        load_agent("expert", torch_threads=bad)
