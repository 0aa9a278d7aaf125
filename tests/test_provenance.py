"""Rule provenance: an agent carries the rules it was trained under (a checkpoint's metadata; the shipped bot's training
config), and every front end plays under them unless rules are given explicitly (`--rules`, `rules=`), which always
win; agents trained under different rules are refused in one line naming both rule sets and both agents; every report
names the rules it was played under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hollywood_gin_env.agents import load_agent, rules_in_play
from hollywood_gin_env.agents.loading import shipped_bot_for
from hollywood_gin_env.agents.provenance import agent_rules, recorded_rules
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv
from hollywood_gin_env.evaluation import evaluate
from hollywood_gin_env.evaluation.evaluate import format_report, play_pair, round_robin
from hollywood_gin_env.play.terminal import first_session, opening_line, parse_args
from hollywood_gin_env.play.web.view import page_view
from hollywood_gin_env.rules.options import Rules
from tests.agents_for_tests import EaaiKnockFirst

EAAI = Rules.preset("eaai")
EAAI_AGENT = "tests.agents_for_tests:EaaiKnockFirst"


class Named:
    """An agent stub: a name and the rules it records."""

    def __init__(self, name: str, rules: object = None) -> None:
        self.name, self.rules = name, rules

    def act(self, observations, action_masks):  # pragma: no cover - never played
        raise AssertionError("not played")


@pytest.fixture
def eaai_checkpoint(tmp_path) -> Path:
    """A small policy checkpoint that records the eaai rules, as the trainer writes them."""
    torch = pytest.importorskip("torch")
    from hollywood_gin_env.agents.checkpoint import save_checkpoint
    from hollywood_gin_env.agents.networks import build_network

    network = {"name": "cards", "kwargs": {"hidden_sizes": [16], "card_channels": 4}}
    torch.manual_seed(0)
    path = tmp_path / "eaai.safetensors"
    save_checkpoint(path, build_network(network), network, rules=EAAI.to_dict())
    return path


# --- the one decision ---------------------------------------------------------------------------------------------


def test_rules_given_explicitly_win_whatever_the_agents_were_trained_under():
    """rules_in_play(agents, rules) is `rules` even when the agents record others (or disagree)."""
    agents = [Named("a", EAAI), Named("b", Rules())]
    assert rules_in_play(agents, Rules(knock_limit=5)) == Rules(knock_limit=5)


def test_without_rules_the_agents_rules_are_played_and_none_recorded_means_the_defaults():
    """The one rule set the recording agents share (agents without a preference do not count); none: Rules()."""
    assert rules_in_play([Named("a"), Named("b")]) == Rules()
    assert rules_in_play([Named("a"), Named("b", EAAI), Named("c", "eaai")]) == EAAI
    assert agent_rules(Named("preset", "eaai")) == EAAI and agent_rules(Named("none")) is None


def test_agents_trained_under_different_rules_are_refused_in_one_line_naming_both():
    """Two recorded rule sets that differ: one ValueError line with both descriptions and both agents' names."""
    with pytest.raises(ValueError) as error:
        rules_in_play([Named("bot", Rules()), Named("stranger"), Named("bot-eaai", EAAI.replace(knock_limit=5))])
    text = str(error.value)
    assert "'bot' was trained under the rules 'hollywood'" in text and "\n" not in text, text
    assert "'bot-eaai' under 'eaai, knock_limit=5'" in text and "--rules" in text, text


def test_an_agent_recording_something_that_is_not_rules_is_named():
    """An agent whose `rules` no Rules reads: a ValueError naming the agent."""
    with pytest.raises(ValueError, match="agent 'odd' records rules that are not rules: unknown rules preset"):
        agent_rules(Named("odd", "nonsense"))


# --- what a checkpoint records ------------------------------------------------------------------------------------


def test_a_checkpoint_agent_carries_the_rules_its_file_records(eaai_checkpoint):
    """A checkpoint whose metadata has "rules" gives an agent with those rules."""
    assert load_agent(f"checkpoint:{eaai_checkpoint}").rules == EAAI


def test_the_shipped_bot_records_the_hollywood_rules_of_its_training_config():
    """The shipped bot's file has no "rules" key; its training config's rules (all defaults) make it hollywood."""
    pytest.importorskip("torch")
    assert load_agent("bot").rules == Rules()


def test_recorded_rules_read_rules_then_the_training_config_then_nothing():
    """ "rules" first, else training.config.rules, else None; rules no Rules reads are named with the file."""
    assert recorded_rules({"rules": EAAI.to_dict(), "training": {"config": {"rules": {}}}}, "f") == EAAI
    assert recorded_rules({"training": {"config": {"rules": {"preset": "eaai"}}}}, "f") == EAAI
    assert recorded_rules({"training": {"config": {}}}, "f") is None and recorded_rules({}, "f") is None
    with pytest.raises(ValueError, match=r"^x\.safetensors: the rules it records are not rules: .*knock_limitt"):
        recorded_rules({"rules": {"knock_limitt": 3}}, "x.safetensors")


# --- the evaluator ------------------------------------------------------------------------------------------------


def test_evaluate_plays_under_the_agents_rules_and_its_reports_name_them(tmp_path, capsys):
    """Without --rules, an eaai agent against the heuristics plays the eaai rules; the text report's first line and
    the JSON (the description and the full dict) name them."""
    path = tmp_path / "report.json"
    argv = ["--agents", EAAI_AGENT, "greedy", "--matches", "2", "--no-progress", "--json", str(path)]
    assert evaluate.main(argv) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "2 matches per pair (duplicate deals), seed 0, rules: eaai", first
    report = json.loads(path.read_text())
    assert report["rules_summary"] == "eaai" and report["rules"] == EAAI.to_dict()


def test_evaluate_refuses_agents_of_different_rules_unless_rules_are_given(capsys):
    """An eaai agent against the shipped bot (hollywood): exit 2, one line naming both; `--rules hollywood` plays
    them under hollywood, `--rules eaai knock_limit=5` under that, each report saying so."""
    pytest.importorskip("torch")
    argv = ["--agents", EAAI_AGENT, "bot", "--matches", "2", "--no-progress"]
    with pytest.raises(SystemExit) as exited:
        evaluate.main(argv)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert exited.value.code == 2 and "'eaai-knock-first' was trained under the rules 'eaai'" in error, error
    assert "'bot' under 'hollywood'" in error
    for rules, named in ((["hollywood"], "hollywood"), (["eaai", "knock_limit=5"], "eaai, knock_limit=5")):
        assert evaluate.main(argv + ["--rules", *rules]) == 0
        assert capsys.readouterr().out.splitlines()[0].endswith(f"rules: {named}")


def test_the_python_api_chooses_the_rules_as_the_command_line_does():
    """round_robin and play_pair without rules play the agents' own (and refuse a mix); rules= wins."""
    pytest.importorskip("torch")
    report = round_robin([EAAI_AGENT, "greedy"], 2)
    assert report["rules"] == EAAI.to_dict() and format_report(report).splitlines()[0].endswith("rules: eaai")
    with pytest.raises(ValueError, match="trained under the rules 'eaai' and agent 'bot' under 'hollywood'"):
        round_robin([EAAI_AGENT, "bot"], 2)
    with pytest.raises(ValueError, match="trained under the rules 'eaai'"):
        play_pair(EaaiKnockFirst(), "bot", 2)
    assert play_pair(EaaiKnockFirst(), "bot", 2, rules=Rules(game_target=30)).matches == 2


# --- the envs and play --------------------------------------------------------------------------------------------


def test_an_env_plays_its_opponents_rules_unless_given_rules(eaai_checkpoint):
    """rules=None: the opponent's recorded rules (else the defaults); rules given: those."""
    spec = f"checkpoint:{eaai_checkpoint}"
    assert HollywoodGinEnv(opponent=spec).rules == EAAI
    assert HollywoodGinEnv(opponent=spec, rules=Rules()).rules == Rules()
    assert HollywoodGinVectorEnv(2, opponent=EaaiKnockFirst(), num_threads=1).rules == EAAI
    assert HollywoodGinEnv(opponent=EAAI_AGENT).rules == EAAI  # an agent of the user's, by reference
    assert HollywoodGinEnv(opponent="expert").rules == Rules() and HollywoodGinEnv().rules == Rules()


def test_play_starts_under_the_opponents_rules_unless_rules_are_given():
    """`play --opponent AGENT`: the opponent's rules, named in the opening line and on the page; `--rules`: those."""
    session = first_session(parse_args(["--opponent", EAAI_AGENT, "--seed", "1"]), web=False)
    assert session.game.rules == EAAI and "under the eaai rules" in opening_line(session)
    assert page_view(session, 0)["rules"]["summary"] == "eaai"
    given = first_session(parse_args(["--opponent", EAAI_AGENT, "--seed", "1", "--rules", "hollywood"]), web=False)
    assert given.game.rules == Rules() and "under the hollywood rules" in opening_line(given)


def test_play_with_rules_and_no_opponent_faces_the_shipped_bot_trained_under_them():
    """`play --rules eaai` faces bot-eaai (the shipped bot trained under those rules); no rules, or rules no shipped
    bot was trained under, face bot (under the rules asked for)."""
    pytest.importorskip("torch")
    assert shipped_bot_for(Rules.preset("eaai")) == "bot-eaai" and shipped_bot_for(Rules()) == "bot"
    assert shipped_bot_for(Rules.preset("classic")) is None and shipped_bot_for(None) is None
    eaai = first_session(parse_args(["--rules", "eaai", "--seed", "1"]), web=False)
    assert eaai.opponent_label == "bot-eaai" and eaai.game.rules == EAAI
    classic = first_session(parse_args(["--rules", "classic", "--seed", "1"]), web=False)
    assert classic.opponent_label == "bot" and classic.game.rules == Rules.preset("classic")
