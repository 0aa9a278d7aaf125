"""The trainer's opponents as data (hollywood_gin_trainer/opponents.py, pool.py): `selfplay.opponents` maps specs to
weights, its entries are the codes of the draw and the privileged critic's "who" columns, the agents a config names
load once and from a training state as a file's, their rules are checked against the run's, and the arenas follow
ppo.py's protocols."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.rules.options import Rules  # noqa: E402
from hollywood_gin_trainer import exploit, opponents  # noqa: E402
from hollywood_gin_trainer import main as train  # noqa: E402
from hollywood_gin_trainer.arena import Arena  # noqa: E402
from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.opponents import SELF_UNLISTED, Lineup, check_agents  # noqa: E402
from hollywood_gin_trainer.options import parse_exploit_args  # noqa: E402
from hollywood_gin_trainer.pool import NO_SLOT  # noqa: E402
from hollywood_gin_trainer.ppo import Matches, RolloutMatches, actor_critic  # noqa: E402
from hollywood_gin_trainer.privileged import OPPONENT_KIND, privileged_view_size  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun  # noqa: E402
from hollywood_gin_trainer.workers import RemoteArena, RolloutWorker  # noqa: E402

SMOKE = "configs/smoke.toml"
PRIVILEGED = ["model.critic='privileged'"]  # smoke's sizes with a critic that reads the "who" columns


def test_a_random_opponent_is_one_config_line_and_the_critic_tells_it_from_self_play():
    """`selfplay.opponents = {self = 1, random = 1}` trains a few updates: matches of both kinds are drawn, the learner
    plays both seats of the self-play ones and one seat of the random ones, and the privileged critic's "who" input
    has a column for each, set for its own matches."""
    config = load_config(SMOKE, [*PRIVILEGED, "selfplay.opponents={self = 1, random = 1}", "rules.game_target=1"])
    run = TrainingRun.create(config)
    run.start()
    assert run.pool.agents[1].name == "random" and not run.pool.lineup.draws_snapshots()
    seen, who = set(), []
    for update in range(1, 4):
        seen |= set(run.arena.kind.tolist())
        run.update(update)
        assert not run.snapshot(update)  # nobody draws snapshots, so none are taken
        rollout = run.arena.rollout
        who.append(rollout.privileged[rollout.valid][:, OPPONENT_KIND : OPPONENT_KIND + 2])
    assert seen == {0, 1}
    who = np.concatenate(who)
    assert (who.sum(axis=1) == 1).all() and who[:, 0].any() and who[:, 1].any()
    first_layer = run.model.value_head[0]
    assert first_layer.in_features == run.model.policy.feature_size + privileged_view_size(1, 2)
    run.close()


def test_the_lineup_numbers_the_maps_entries_in_order():
    """Entry j is code j; "self" and "snapshots" are found wherever they stand; a lineup without "self" plays
    self-play as code -1, which has no column."""
    lineup = Lineup.of({"expert": 0.5, "self": 0.0, "snapshots": 2.0, "mine=checkpoint:x.safetensors": 1.0})
    assert lineup.size == 4 and lineup.self_code == 1 and lineup.lowest_code == 0
    assert lineup.agents() == [(0, "expert"), (3, "mine=checkpoint:x.safetensors")]
    assert lineup.is_snapshot(np.array([0, 1, 2, 3])).tolist() == [False, False, True, False]
    assert lineup.probabilities().tolist() == [0.5 / 3.5, 0.0, 2.0 / 3.5, 1.0 / 3.5] and lineup.draws_snapshots()
    alone = Lineup.of({"greedy": 1.0})
    assert alone.self_code == SELF_UNLISTED == alone.lowest_code and not alone.is_snapshot(np.array([0])).any()


def test_a_snapshots_draw_without_a_self_entry_is_self_play_with_no_who_column_until_the_first_snapshot():
    """{snapshots, expert}: while the pool is empty a snapshots draw plays the learner in both seats (code -1, no
    column set); once a snapshot is in the pool it is drawn with its slot."""
    config = load_config(SMOKE, [*PRIVILEGED, "selfplay.opponents={snapshots = 3.0, expert = 1.0}"])
    run = TrainingRun.create(config)
    run.start()
    arena = run.arena
    unlisted = arena.kind == SELF_UNLISTED
    assert unlisted.any() and (arena.kind[~unlisted] == 1).all() and (arena.slot == NO_SLOT).all()
    assert (arena.learner_to_act() == (unlisted | (arena.players == arena.learner_seat))).all()
    who = arena.privileged(arena.players)[:, OPPONENT_KIND : OPPONENT_KIND + 2]
    assert not who[unlisted].any() and (who[~unlisted] == [0, 1]).all()
    run.pool.add(run.model.policy, 1)
    kinds, slots = run.pool.draw(64, np.random.default_rng(0))
    assert set(kinds.tolist()) == {0, 1} and (slots[kinds == 0] == 0).all() and (slots[kinds == 1] == NO_SLOT).all()
    run.close()


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Two policy files whose metadata record the rules they were trained under: hollywood's and eaai's."""
    folder = tmp_path_factory.mktemp("policies")
    paths = {}
    for name in ("hollywood", "eaai"):
        run = TrainingRun.create(load_config(SMOKE, rules=Rules.preset(name)))
        paths[name] = folder / f"{name}-policy.safetensors"
        run.save_policy(paths[name])
        run.close()
    return paths


def _refusal(*argv: str) -> str:
    """The one line `hollywood-gin train` stops with on these arguments (no run started)."""
    with pytest.raises(SystemExit) as stopped:
        train.main(["--config", SMOKE, "--no-progress", *argv])
    text = str(stopped.value.code)
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize("where", ["selfplay.opponents", "eval.opponents", "warmstart.init"])
def test_an_agent_trained_under_other_rules_is_refused_unless_the_config_names_its_rules(checkpoints, tmp_path, where):
    """An opponent, an evaluation opponent or a warm start trained under eaai is refused by a config that names no
    rules (it plays hollywood's), in one line naming both rule sets, before the run directory is made; a config that
    names its rules (here --rules hollywood, or rules.preset) is asked to and may."""
    spec = f"checkpoint:{checkpoints['eaai']}"
    sets = {
        "selfplay.opponents": f"selfplay.opponents={{self = 1.0, {spec!r} = 1.0}}",
        "eval.opponents": f"eval.opponents=[{spec!r}]",
        "warmstart.init": f"warmstart.init={spec!r}",
    }
    run_dir = tmp_path / "run"
    text = _refusal("--set", sets[where], "--run-dir", str(run_dir))
    assert f"{where}" in text and "trained under the rules eaai, the config plays hollywood" in text, text
    assert not run_dir.exists()
    check_agents(load_config(SMOKE, [sets[where]], rules=Rules.preset("hollywood")))
    check_agents(load_config(SMOKE, [sets[where], "rules.preset='hollywood'"]))
    check_agents(load_config(SMOKE, [sets[where].replace("eaai", "hollywood")]))  # the same rules: no question


def test_an_agent_no_loader_builds_is_one_line_before_the_run_directory_is_made(tmp_path):
    """A spec load_agent cannot build, among the opponents or the evaluation opponents, is refused naming the key."""
    for setting, fragment in (
        ("selfplay.opponents={self = 1.0, nobody = 1.0}", "selfplay.opponents 'nobody': unknown agent spec 'nobody'"),
        ("eval.opponents=['expert', 'nobody']", "eval.opponents 'nobody': unknown agent spec 'nobody'"),
    ):
        text = _refusal("--set", setting, "--run-dir", str(tmp_path / "run"))
        assert fragment in text, text
        assert not (tmp_path / "run").exists()


def test_exploit_plays_the_targets_rules_unless_asked_otherwise(checkpoints):
    """Against a target trained under eaai, exploit plays eaai where the config names no rules; --rules or a
    rules key wins; a --init policy of other rules than the target's is refused in one line naming both."""
    target = f"checkpoint:{checkpoints['eaai']}"

    def planned(*argv: str):
        return exploit.plan_exploit(parse_exploit_args([target, "--config", SMOKE, *argv]))[1]

    assert planned().make_rules() == Rules.preset("eaai")
    assert planned("--rules", "hollywood").make_rules() == Rules.preset("hollywood")
    assert planned("--set", "rules.knock_limit=5").make_rules() == Rules(knock_limit=5)
    assert planned("--rules", "eaai", "knock_limit=5").make_rules() == Rules.preset("eaai", knock_limit=5)
    with pytest.raises(ValueError) as refused:
        planned("--init", f"checkpoint:{checkpoints['hollywood']}")
    message = str(refused.value)
    assert re.search(r"TARGET .* under the rules 'eaai' and agent '--init .* under 'hollywood'", message), message
    assert "\n" not in message
    assert planned("--init", f"checkpoint:{checkpoints['hollywood']}", "--rules", "eaai").warmstart.init


def test_the_exploit_report_and_its_plot_name_the_rules(monkeypatch):
    """The table's header and exploit.png's title say the rules the run played (Rules.describe)."""
    from matplotlib.axes import Axes

    history = [{"update": 2, "wall_s": 60, "decisions": 512, "win_vs_bot": 0.5, "low_vs_bot": 0.4, "high_vs_bot": 0.6}]
    rules = Rules.preset("eaai", knock_limit=5).describe()
    table = exploit.summary_table("bot", history, 4, rules)
    assert table.splitlines()[0].startswith("best response vs bot (rules: eaai, knock_limit=5): 4 matches")
    assert "50.0% [40.0, 60.0]" in table
    titles = []
    real = Axes.set_title
    monkeypatch.setattr(Axes, "set_title", lambda self, text, *a, **k: (titles.append(text), real(self, text))[1])
    exploit.plot_png("bot", history, rules)
    assert titles == ["best response vs bot (rules: eaai, knock_limit=5)"]


def test_a_resumed_run_loads_the_agents_its_file_names_without_importing(monkeypatch, tmp_path):
    """A new run loads the agents of the user's config as the user's act; a run resumed from its training state
    (a file) and a rollout worker told so load them with allow_import=False."""
    calls = []
    real = opponents.load_agent

    def load_agent(spec, seed=None, num_threads=None, allow_import=True):
        calls.append((spec, allow_import))
        return real(spec, seed=seed, num_threads=num_threads)

    monkeypatch.setattr(opponents, "load_agent", load_agent)
    run = TrainingRun.create(load_config(SMOKE, ["selfplay.opponents={self = 1.0, random = 1.0}"]))
    run.start()
    run.save(tmp_path / "last.safetensors")
    run.close()
    assert calls and all(allowed for _, allowed in calls)
    calls.clear()
    TrainingRun.resume(tmp_path / "last.safetensors").close()
    assert {spec for spec, _ in calls} == {"random", "expert", "greedy"} and not any(a for _, a in calls)
    calls.clear()
    RolloutWorker(load_config(SMOKE).to_dict(), 0, 0, 4, allow_import=False)
    assert calls and not any(allowed for _, allowed in calls)


def test_evaluation_opponents_are_any_spec_named_by_their_label(checkpoints):
    """eval.opponents takes any spec, NAME=SPEC labelling one: each is loaded once, by the pool, and its figures are
    named by its label."""
    spec = f"mine=checkpoint:{checkpoints['hollywood']}"
    config = load_config(SMOKE, [f"eval.opponents=['random', {spec!r}]", "eval.matches=2"])
    assert config.eval_labels() == ["random", "mine"]
    run = TrainingRun.create(config)
    assert set(run.pool.evaluators) == {"random", "mine"}
    results = run.evaluate()
    assert set(results) == {"random", "mine"} and results["mine"]["agent_b"] == "mine"
    assert run.record_evaluation(results) and set(run.progress.history[0]) >= {"win_vs_random", "win_vs_mine"}
    run.close()


def _members(protocol: type) -> dict[str, object]:
    """The protocol's own members: name -> its attribute in the class (a function, a property, or None for data)."""
    names = set(protocol.__annotations__) | {
        name for name, value in vars(protocol).items() if callable(value) or isinstance(value, property)
    }
    return {name: vars(protocol).get(name) for name in names if not name.startswith("_")}


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


@pytest.mark.parametrize(("protocol", "classes"), [(Matches, (Arena, RemoteArena)), (RolloutMatches, (Arena,))])
def test_the_arenas_implement_ppos_protocols_structurally(protocol, classes):
    """Every method and property of ppo.py's `Matches` (what an update and the run ask of the matches) is on the local
    and the Ray arena with the same parameters, every method of `RolloutMatches` (what the rollout loop plays) on the
    local one; an Arena instance passes isinstance against both, its data members included."""
    for name, member in _members(protocol).items():
        for cls in classes:
            if isinstance(member, property):
                assert isinstance(getattr(cls, name, None), property), f"{cls.__name__}.{name}"
            elif member is not None:
                assert _parameters(getattr(cls, name)) == _parameters(member), f"{cls.__name__}.{name}"
    config = load_config(SMOKE, ["env.num_envs=4"])
    arena = Arena(config, actor_critic(config).policy, None, np.random.default_rng(0))
    assert isinstance(arena, protocol)
    assert not isinstance(object(), protocol)
