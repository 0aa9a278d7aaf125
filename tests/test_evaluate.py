"""evaluate.py: duplicate deals, the statistics against hand-worked values, illegal agents, determinism, CLI."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hollywood_gin_env.agents import Agent, GreedyAgent, RandomAgent
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_kernel
from hollywood_gin_env.evaluation.duplicate import MAX_MATCHES
from hollywood_gin_env.evaluation.evaluate import (
    PROG,
    bradley_terry,
    duplicate_deals,
    format_report,
    main,
    play_pair,
    round_robin,
    summarize_pair,
    wilson_interval,
    without_timing,
)
from hollywood_gin_env.rules.options import Rules

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.nojit
def test_duplicate_pairs_share_seed_and_dealer_with_seats_swapped():
    seeds, dealers, seat_a = duplicate_deals(10, seed=3)
    assert (seeds[0::2] == seeds[1::2]).all() and len(set(seeds[0::2].tolist())) == 5
    assert (dealers[0::2] == dealers[1::2]).all()
    assert seat_a.tolist() == [0, 1] * 5
    with pytest.raises(ValueError, match="even"):
        duplicate_deals(7, seed=0)


def test_duplicate_deals_are_the_same_deals_with_seats_swapped():
    """Hand 1: each seat gets the same cards in both matches of a pair. Hand k: the same shuffled deck."""
    seeds, dealers, seat_a = duplicate_deals(16, seed=11)
    engine = Engine(16)
    engine.new_matches(seeds=seeds, first_dealers=dealers)
    hands = engine.state.hands.copy()
    assert (hands[0::2] == hands[1::2]).all() and (engine.state.deck[0::2] == engine.state.deck[1::2]).all()
    decks = [[engine.state.deck[i].copy()] for i in range(16)]
    agents = [RandomAgent(seed=1), GreedyAgent()]  # the pair's two matches play differently
    obs, masks = np.zeros((16, OBS_SIZE), np.float32), np.zeros((16, 107), np.int8)
    while not engine.done.all():
        active, current = ~engine.done, engine.current_player.copy()
        encode_kernel(current, active, engine.state.arrays(), engine.params, obs, masks)
        actions = np.zeros(16, dtype=np.int64)
        for side in (0, 1):
            rows = np.flatnonzero(active & ((current == seat_a) == (side == 0)))
            actions[rows] = agents[side].act(obs[rows], masks[rows])
        hand_no = engine.state.match[:, col.M_HAND_NO].copy()
        engine.step(actions, active)
        for i in np.flatnonzero(engine.state.match[:, col.M_HAND_NO] > hand_no):
            decks[i].append(engine.state.deck[i].copy())
    assert any(len(decks[2 * j]) != len(decks[2 * j + 1]) for j in range(8))  # the pairs did play differently
    for j in range(8):
        for x, y in zip(decks[2 * j], decks[2 * j + 1], strict=False):
            assert (x == y).all()


@pytest.mark.nojit
def test_wilson_interval_known_values():
    # Worked by hand (z = 1.96): p = 0.8, n = 10 -> centre 0.7167, half-width 0.2266.
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


@pytest.mark.nojit
def test_bradley_terry_two_players_known_values():
    # 75-25: strengths 3:1, so the gap is 400 log10(3) = 190.85 Elo, split +-95.42 around 0.
    # Fisher: var(b1 - b2) = 1 / (n p (1 - p)) = 1 / 18.75; centred, se(b1) = sqrt(var / 4) = 0.11547 nats.
    ratings, se = bradley_terry(np.array([[0, 75], [25, 0]]), prior=0.0)
    assert ratings == pytest.approx([95.424, -95.424], abs=1e-3)
    assert se == pytest.approx([0.11547 * 173.7178] * 2, rel=1e-4)


@pytest.mark.nojit
def test_bradley_terry_recovers_exact_strengths_and_prior_keeps_sweeps_finite():
    strengths = np.array([1.0, 2.0, 4.0])
    n = 1200
    wins = np.array(
        [[n * si / (si + sj) if i != j else 0 for j, sj in enumerate(strengths)] for i, si in enumerate(strengths)]
    )
    ratings, _ = bradley_terry(wins, prior=0.0)
    expected = 400 * np.log10(strengths)
    assert ratings == pytest.approx(expected - expected.mean(), abs=1e-6)
    swept, se = bradley_terry(np.array([[0, 100], [0, 0]]), prior=1.0)
    assert swept[0] - swept[1] == pytest.approx(400 * np.log10(100.5 / 0.5), abs=1e-6)
    assert np.isfinite(se).all()


class IllegalAgent(Agent):
    """Always answers with the first illegal action of its mask."""

    name = "illegal"

    def _act(self, observations, action_masks):
        return np.argmin(action_masks, axis=1).astype(np.int64)


def test_an_illegal_agent_is_counted_and_replaced_not_crashing():
    record = play_pair(IllegalAgent(), GreedyAgent(), 8, seed=0)
    assert record.illegal[0] == record.decisions[0] > 0 and record.illegal[1] == 0
    summary = summarize_pair(record)
    assert summary["illegal_actions"][0] == record.decisions[0]
    report = {"matches_per_pair": 8, "seed": 0, "pairs": [summary], "ratings": []}
    assert "WARNING: illegal actions" in format_report(report)


def test_a_wrong_shape_names_the_agent():
    class Broken(Agent):
        name = "broken"

        def _act(self, observations, action_masks):
            return np.zeros(len(observations) + 1, dtype=np.int64)

    with pytest.raises(ValueError, match="agent 'broken' returned actions of shape"):
        play_pair(Broken(), GreedyAgent(), 2)


def test_same_seed_same_numbers_and_rules_pass_through():
    def numbers(seed):
        return without_timing(round_robin(["greedy", "random"], 12, seed=seed, rules=Rules(game_target=30)))

    first = numbers(5)
    assert first == numbers(5)
    assert first["rules"]["game_target"] == 30 and first["pairs"][0]["hands_per_match"] < 6
    assert first != numbers(6)


def test_identical_agents_tie_exactly_on_duplicate_deals():
    summary = summarize_pair(play_pair(GreedyAgent(), GreedyAgent(), 40, seed=1))
    assert summary["match_win_rate"] == 0.5 and summary["points_per_hand"] == 0.0


def test_greedy_beats_random_and_expert_beats_greedy_on_small_runs():
    assert summarize_pair(play_pair(GreedyAgent(), RandomAgent(seed=0), 20, seed=0))["match_win_rate"] == 1.0
    from hollywood_gin_env.agents import ExpertAgent

    assert summarize_pair(play_pair(ExpertAgent(), GreedyAgent(), 100, seed=0))["match_win_rate"] > 0.55


def test_cli_json_and_table(tmp_path, capsys):
    path = tmp_path / "report.json"
    assert (
        main(
            [
                "--agents",
                "greedy",
                "random",
                "--matches",
                "10",
                "--json",
                str(path),
                "--no-progress",
                "--rules",
                "game_target=50",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "greedy vs random" in table and "rating" in table
    report = json.loads(path.read_text())
    pair = report["pairs"][0]
    assert (pair["agent_a"], pair["agent_b"], pair["match_win_rate"]) == ("greedy", "random", 1.0)
    assert report["rules"]["game_target"] == 50 and {r["agent"] for r in report["ratings"]} == {"greedy", "random"}
    with pytest.raises(SystemExit):
        main(["--agents", "greedy", "random", "--matches", "9"])
    with pytest.raises(SystemExit):
        main(["--agents", "greedy", "random", "--rules", "knock_limit=99"])


def test_root_script_runs():
    out = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--agents", "greedy", "random", "--matches", "4", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "greedy vs random" in out.stdout


# --- chunks: the same deals and totals however a pair is cut, in bounded memory, with clear errors ---------------


def deals_all_at_once(num_matches, seed):
    """The evaluator's deals as it drew them before it played in chunks: every pair's seed, then every dealer."""
    rng = np.random.default_rng(seed)
    deal_seeds = rng.integers(0, 2**63, size=num_matches // 2, dtype=np.int64).astype(np.uint64)
    dealers = rng.integers(0, 2, size=num_matches // 2, dtype=np.int64)
    return np.repeat(deal_seeds, 2), np.repeat(dealers, 2)


@pytest.mark.nojit
@pytest.mark.parametrize("num_matches", [2, 6, 10, 400, 2002])
@pytest.mark.parametrize("seed", [0, 5, 2**40 + 3])
def test_any_slice_of_the_deals_equals_the_deals_drawn_all_at_once(num_matches, seed):
    seeds, dealers = deals_all_at_once(num_matches, seed)
    for start, stop in [(0, num_matches), (0, 2), (num_matches - 2, num_matches), (2, num_matches), (4, 10), (6, 12)]:
        if not start < stop <= num_matches:
            continue
        got_seeds, got_dealers, seat_a = duplicate_deals(num_matches, seed, start, stop)
        assert (got_seeds == seeds[start:stop]).all() and (got_dealers == dealers[start:stop]).all()
        assert seat_a.tolist() == [0, 1] * ((stop - start) // 2)
    with pytest.raises(ValueError, match=r"matches \[3, 8\) must be an even, non-empty slice"):
        duplicate_deals(num_matches + 8, seed, 3, 8)


def test_each_agent_reports_its_decisions_per_second_of_its_own_time():
    """The pair's summary times each side's act calls alone: an agent that sleeps 20 ms a call shows at most 50
    calls' worth of decisions a second and fewer than its quick opponent; the report's ratings give each agent's
    speed, and without_timing leaves every other figure."""
    import time

    class Slow(GreedyAgent):
        name = "slow"

        def act(self, observations, masks):
            time.sleep(0.02)
            return super().act(observations, masks)

    summary = summarize_pair(play_pair(Slow(), GreedyAgent(), 2, seed=3, rules=Rules(game_target=30)))
    slow, quick = summary["decisions_per_second"]
    decisions = summary["decisions"][0]  # each of A's calls makes at most 2 of them (one a match)
    assert summary["act_seconds"][0] >= 0.02 * decisions / 2 and slow <= 2 / 0.02 and quick > slow
    assert slow == pytest.approx(summary["decisions"][0] / summary["act_seconds"][0], rel=1e-2)
    report = round_robin([Slow(), "greedy"], 2, seed=3, rules=Rules(game_target=30))
    speeds = {r["agent"]: r["decisions_per_second"] for r in report["ratings"]}
    assert speeds["greedy"] > speeds["slow"] > 0
    stripped = without_timing(report)
    assert "decisions_per_second" not in stripped["ratings"][0] and "seconds" not in stripped["pairs"][0]
    assert stripped["pairs"][0]["decisions"] == report["pairs"][0]["decisions"]


def test_chunks_add_up_to_the_one_batch_totals():
    """Deterministic agents: cutting the pair into chunks of 4 changes nothing but the time."""
    from hollywood_gin_env.agents import ExpertAgent

    whole = summarize_pair(play_pair(ExpertAgent(), GreedyAgent(), 24, seed=2, chunk_matches=1000))
    chunked = summarize_pair(play_pair(ExpertAgent(), GreedyAgent(), 24, seed=2, chunk_matches=4))
    assert without_timing(chunked) == without_timing(whole) and whole["matches"] == 24 and whole["hands"] > 24


def test_points_standard_error_from_totals_is_the_sample_formula():
    from hollywood_gin_env.evaluation.evaluate import points_standard_error

    points = np.array([3, -7, 0, 25, -1, 4])
    exact = points.std(ddof=1) / np.sqrt(len(points))
    assert points_standard_error(int(points.sum()), int((points**2).sum()), len(points)) == pytest.approx(exact)
    assert points_standard_error(5, 25, 1) == 0.0


def test_the_tables_stay_aligned_with_a_long_agent_name():
    """Every row of both tables ends where its header ends, whatever the names' lengths; the ratings line up under
    their headers, each with the agent's decisions per second of its own time."""
    agent = GreedyAgent()
    agent.name = "checkpoint:/home/someone/runs/2026-12-01-lr3e-4-seed0/checkpoints/best.pt"
    report = round_robin([agent, "random", "expert"], 4, seed=0, rules=Rules(game_target=30))
    lines = format_report(report).splitlines()
    results, play, ratings = lines[1:5], lines[6:10], [line for line in lines if line.startswith("  ")]
    assert len({len(line) for line in results}) == 1 and len({len(line) for line in play}) == 1
    assert results[0].startswith("A vs B") and play[0].startswith("A vs B") and "gin A/B" in play[0]
    columns = [line.index("]") for line in results[1:]]  # the first "]" closes the match-win column
    assert len(set(columns)) == 1 and columns[0] == results[0].index("CI]") + 2
    assert len({line.index("[") for line in ratings}) == 1 and len(ratings) == 3
    assert lines[11].index("95% interval") == ratings[0].index("[")
    assert {len(line) for line in ratings} == {len(lines[11])} and lines[11].endswith("decisions/s")
    assert all(float(line.split()[-1].replace(",", "")) > 0 for line in ratings)


def test_short_names_line_up_under_the_ratings_headers():
    """With names shorter than the ratings' title, the ratings and their speeds still sit under their headers."""
    lines = format_report(round_robin(["greedy", "random"], 2, seed=0, rules=Rules(game_target=30))).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("rating"))
    ratings = lines[header + 1 :]
    assert len(ratings) == 2 and {line.index("[") for line in ratings} == {lines[header].index("95% interval")}
    assert {len(line) for line in ratings} == {len(lines[header])}


def test_default_labels_are_a_checkpoints_file_stem_and_the_spec_otherwise():
    """A checkpoint is labelled by its file's stem, any other spec by itself (trimmed), an agent object by its name."""
    from hollywood_gin_env.evaluation.evaluate import agent_label

    assert agent_label("checkpoint:runs/2026-12-01-lr3e-4-seed0/checkpoints/best.pt") == "best"
    assert agent_label("CHECKPOINT:runs/x/hollywood-ppo.pt") == "hollywood-ppo"
    assert agent_label(" expert ") == "expert" and agent_label("checkpoint:a=b") == "a=b"
    assert agent_label(GreedyAgent()) == GreedyAgent().name


def test_a_json_report_that_cannot_be_written_is_one_line_after_the_table(tmp_path, capsys, monkeypatch):
    """On a full disk the report table is still printed, then one line says the JSON was not written (naming the file
    and the disk's reason) and the status is 1: no traceback, and no file left half written."""
    from hollywood_gin_env.support import atomic

    def disk_full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    path = tmp_path / "report.json"
    assert main(["--agents", "greedy", "random", "--matches", "2", "--no-progress", "--json", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "greedy vs random" in out
    assert err.splitlines() == [f"{PROG}: could not write {path} (No space left on device); nothing was written"]
    assert list(tmp_path.iterdir()) == []


def test_agents_given_as_name_equals_spec_carry_the_name_into_the_tables_and_json(tmp_path, capsys):
    """--agents g=greedy names the agent g in both tables and the ratings; the JSON holds each name with its spec."""
    from hollywood_gin_env.evaluation.evaluate import parse_agent_arg

    assert parse_agent_arg("bot=checkpoint:runs/x/policy.pt") == ("bot", "checkpoint:runs/x/policy.pt")
    assert parse_agent_arg("checkpoint:runs/lr=3e-4/policy.pt") == (None, "checkpoint:runs/lr=3e-4/policy.pt")
    path = tmp_path / "report.json"
    assert main(["--agents", "g=greedy", "random", "--matches", "4", "--no-progress", "--json", str(path)]) == 0
    table = capsys.readouterr().out
    assert table.count("g vs random") == 2 and "  g " in table and "greedy" not in table
    report = json.loads(path.read_text())
    assert report["agents"] == [{"name": "g", "spec": "greedy"}, {"name": "random", "spec": "random"}]
    assert (report["pairs"][0]["agent_a"], report["ratings"][0]["agent"]) == ("g", "g")


@pytest.mark.parametrize(
    "agents, named",
    [
        (["a=greedy", "a=random"], "'a'"),
        (["greedy", "greedy"], "'greedy'"),
        (["x=greedy", "x=greedy"], "'x'"),
        (["my bot=greedy", "random"], "'my bot'"),
        (["=greedy", "random"], "''"),
        (["a" * 25 + "=greedy", "random"], "'" + "a" * 25 + "'"),
        (["\x1b[2J=greedy", "random"], "'\\x1b[2J'"),
    ],
    ids=["same_name", "same_spec", "same_both", "space", "empty", "too_long", "escape"],
)
def test_repeated_or_bad_names_are_refused_by_name(agents, named, capsys):
    """Two agents with one label, or a name that is empty, too long or not plain text, stop the run before a match."""
    with pytest.raises(SystemExit):
        main(["--agents", *agents, "--matches", "4", "--no-progress"])
    error = capsys.readouterr().err
    assert named in error and ("NAME=SPEC" in error or "letters, digits" in error), error
    assert "Traceback" not in error


@pytest.mark.slow  # two untrained networks play a whole match (15-20 s): CI's second command runs it
def test_two_checkpoints_with_one_stem_are_refused_until_named(tmp_path):
    """runs/a/policy.pt and runs/b/policy.pt would share the label "policy": refused, saying to name them."""
    torch = pytest.importorskip("torch")
    from hollywood_gin_env.agents.checkpoint import save_checkpoint
    from hollywood_gin_env.agents.networks import build_network

    network = {"name": "cards", "kwargs": {"hidden_sizes": [8]}}
    torch.manual_seed(0)  # two seeded untrained networks: the match's length is the same on every run
    specs = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        save_checkpoint(tmp_path / run / "policy.pt", build_network(network), network)
        specs.append(f"checkpoint:{tmp_path / run / 'policy.pt'}")
    with pytest.raises(ValueError, match=r"both labelled 'policy': name them apart with NAME=SPEC"):
        round_robin(specs, 2, seed=0)
    report = round_robin(specs, 2, seed=0, names=["a", "b"], rules=Rules(game_target=1))
    assert [r["agent"] for r in report["ratings"]] == ["a", "b"]
    assert report["agents"][1] == {"name": "b", "spec": specs[1]}


def test_the_report_fits_120_columns_with_a_checkpoint_agent(tmp_path, capsys):
    """A checkpoint deep in a run folder is labelled by its stem, so every line of the report fits 120 columns."""
    pytest.importorskip("torch")
    from hollywood_gin_env.agents.checkpoint import save_checkpoint
    from hollywood_gin_env.agents.networks import build_network

    network = {"name": "cards", "kwargs": {"hidden_sizes": [8]}}
    path = tmp_path / "runs" / "2026-12-01-lr3e-4-seed0-a-long-run-name" / "checkpoints" / "hollywood-ppo.pt"
    path.parent.mkdir(parents=True)
    save_checkpoint(path, build_network(network), network)
    args = ["--agents", f"checkpoint:{path}", "expert", "greedy", "--matches", "4", "--no-progress"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "hollywood-ppo vs expert" in "\n".join(lines) and str(tmp_path) not in "\n".join(lines)
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    named = ["--agents", f"{'b' * 24}=checkpoint:{path}", f"{'e' * 24}=expert", "--matches", "2", "--no-progress"]
    assert main(named) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 120, "two names of the longest kind"


def test_schedule_refuses_bad_values_by_name():
    from hollywood_gin_env.evaluation.evaluate import Schedule

    for kwargs, message in [
        ({"workers": 0}, "workers=0"),
        ({"chunk_matches": 7}, "chunk_matches=7"),
        ({"chunk_timeout": float("nan")}, "chunk_timeout=nan"),
        ({"max_retries": -1}, "retries"),
        ({"task_cpus": 0}, "task_cpus=0"),
        ({"ray_address": "1.2.3.4:6379"}, "needs workers of 2 or more"),
    ]:
        with pytest.raises(ValueError, match=message):
            Schedule(**kwargs)
    with pytest.raises(SystemExit):
        main(["--agents", "greedy", "random", "--matches", "4", "--ray-address", "1.2.3.4:6379"])


def test_workers_without_ray_installed_say_how_to_install_it(monkeypatch):
    from hollywood_gin_env.evaluation.evaluate import Schedule, evaluate_pairs

    monkeypatch.delitem(sys.modules, "hollywood_gin_env.evaluation.ray_tasks", raising=False)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(ValueError, match=r'workers=2 needs Ray: python -m pip install "hollywood-gin\[ray\]"'):
        evaluate_pairs([("greedy", "random")], 4, schedule=Schedule(workers=2))


def test_one_worker_never_imports_ray():
    code = (
        "import sys; from hollywood_gin_env.evaluation.evaluate import main; "
        "code = main(['--agents', 'greedy', 'random', '--matches', '4', '--no-progress', '--workers', '1']); "
        "print(code, 'ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.splitlines()[-1] == "0 False"


MEMORY_PROBE = """
import resource, sys, tracemalloc
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a regression fails fast, not by eating the machine
import hollywood_gin_env.evaluation.evaluate as evaluate
evaluate.main(["--agents", "greedy", "random", "--matches", "2", "--no-progress"])  # kernels loaded before measuring
real_play_job = evaluate.play_job

def play_first_chunk_only(*args, **kwargs):
    real_play_job(*args, **kwargs)
    raise KeyboardInterrupt  # stands in for the user stopping the run after the first chunk

evaluate.play_job = play_first_chunk_only
tracemalloc.start()
code = evaluate.main(["--agents", "greedy", "random", "--matches", sys.argv[1], "--chunk-matches", "200",
                      "--no-progress"])
print(code, tracemalloc.get_traced_memory()[1])
"""


@pytest.mark.slow  # two evaluations of many matches (about 5 s): CI's second command runs it
def test_memory_does_not_grow_with_the_number_of_matches():
    """The most matches a pair may have (100,000) take one chunk's memory at a time, as 400 do."""
    peaks = {}
    for matches in ("400", str(MAX_MATCHES)):
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, matches], capture_output=True, text=True, cwd=ROOT, timeout=300
        )
        code, peak = out.stdout.split()[-2:]
        assert code == "130" and "interrupted: 0 of 1 pairs finished" in out.stderr, out.stderr
        peaks[matches] = int(peak)
    assert peaks[str(MAX_MATCHES)] < 1.2 * peaks["400"] + (1 << 20), peaks
    assert peaks[str(MAX_MATCHES)] < 64 << 20, peaks
