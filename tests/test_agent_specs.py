"""Agents by reference: `module:attr` (a class or a factory of the user's), names installed packages register as entry
points, `NAME=SPEC` labels, and `--import MODULE`; a spec read from a file never imports code. The agents the tests
name are in tests/agents_for_tests.py; the programs run in subprocesses from a folder outside the checkout, as a
user's own would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hollywood_gin_env.agents import ExpertAgent, load_agent, loading
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.evaluation.evaluate import Schedule, round_robin, without_timing
from hollywood_gin_env.play.session import Session, save_match
from hollywood_gin_env.play.terminal import first_session, parse_args
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.imports import import_modules

ROOT = Path(__file__).resolve().parents[1]
AGENTS = "tests.agents_for_tests"
SHORT = Rules(game_target=30)  # short matches keep the programs quick
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def run(cwd: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """`python ARGS` from `cwd` (a folder without the checkout's files), the checkout's package on PYTHONPATH, no
    input."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def legal(agent, seed: int = 4) -> bool:
    """True if the agent's action in a fresh match's first position is legal."""
    game = Game(seed=seed)
    view = game.observation(game.current_player)
    action = int(agent.act(view["observation"][None], view["action_mask"][None])[0])
    return bool(view["action_mask"][action])


# --- module:attr --------------------------------------------------------------------------------------------------


def test_a_class_by_reference_is_built_with_the_keywords_it_accepts():
    """`module:Class` is called with the keywords it takes among seed, num_threads and rules (here seed and
    num_threads), and what it returns plays."""
    agent = load_agent(f"{AGENTS}:KnockFirst", seed=3, num_threads=2, rules=SHORT)
    assert type(agent).__name__ == "KnockFirst" and agent.name == "knock-first"
    assert agent.built_with == {"seed": 3, "num_threads": 2} and agent.resets == []
    assert legal(agent)


def test_a_factory_taking_any_keywords_gets_the_rules_the_caller_knows():
    """A factory with **kwargs gets seed, num_threads and (when the caller knows them) rules."""
    agent = load_agent(f"{AGENTS}:make_knocker", seed=5, num_threads=1, rules=SHORT)
    assert agent.built_with == {"rules": SHORT, "seed": 5, "num_threads": 1}
    assert load_agent(f"{AGENTS}:make_knocker", num_threads=1).built_with == {"rules": None, "num_threads": 1}


def test_a_dotted_attribute_is_followed_and_an_agent_without_seed_keyword_is_reset_with_the_seed():
    """`module:Holder.make` reaches the nested factory (a staticmethod); its agent, built without a seed, is reset
    with the seed; a classmethod factory is called bound to its class."""
    agent = load_agent(f"{AGENTS}:Holder.make", seed=9)
    assert agent.name == "knock-first" and agent.resets == [9]
    built = load_agent(f"{AGENTS}:Holder.build", seed=7)
    assert built.built_with["seed"] == 7 and built.resets == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here:Agent", "cannot import the module 'no_such_module_here': ModuleNotFoundError"),
        (f"{AGENTS}:Missing", f"the module '{AGENTS}' has no attribute 'Missing'"),
        (f"{AGENTS}:NOT_CALLABLE", "names a value of type int, which is not an agent class"),
        (f"{AGENTS}:undeclared", f"names the function {AGENTS}.undeclared, which is not an agent class"),
        (f"{AGENTS}:Holder.make.__globals__", "a path goes through modules and classes"),
        ("hollywood_gin_env.agents.base:Agent", "names the class hollywood_gin_env.agents.base.Agent, which is not"),
        (f"{AGENTS}:broken", "failed when called: RuntimeError: no weights here"),
        (f"{AGENTS}:not_an_agent", "made 'int', not an agent: an agent has act(observations, action_masks) and a name"),
    ],
)
def test_a_reference_that_fails_is_one_line_naming_the_spec(spec, message):
    """A missing module or attribute, something not declared an agent (a constant, a function not marked
    @agent_factory), a path through a function, a factory that raises (its message's first line only) or one that
    returns no agent: a ValueError of one line naming the spec and what went wrong."""
    with pytest.raises(ValueError) as error:
        load_agent(spec)
    text = str(error.value)
    assert text.startswith(f"agent {spec!r}") and message in text and "\n" not in text, text


def test_a_module_failing_at_import_is_one_line_naming_it(tmp_path, monkeypatch):
    """A user's module with a syntax error or an exception at import: one line naming the module and the error."""
    (tmp_path / "typo_agents.py").write_text("def broken(:\n")
    (tmp_path / "raising_agents.py").write_text("raise ImportError('needs jax')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"^agent 'typo_agents:A': cannot import the module 'typo_agents': Syntax"):
        load_agent("typo_agents:A")
    with pytest.raises(ValueError, match=r"cannot import the module 'raising_agents': ImportError: needs jax$"):
        load_agent("raising_agents:A")


def test_a_named_spec_labels_its_agent():
    """NAME=SPEC builds SPEC and names the agent NAME; a checkpoint path holding '=' stays one spec."""
    assert load_agent("mine=expert").name == "mine"
    assert load_agent(f"k={AGENTS}:KnockFirst").name == "k"
    with pytest.raises(ValueError, match="agent name 'bad name'"):
        load_agent("bad name=expert")
    with pytest.raises(FileNotFoundError):
        load_agent("checkpoint:runs/lr=3e-4/absent.safetensors")


def test_a_shipped_bot_missing_from_the_install_is_one_line_saying_so(monkeypatch):
    """A shipped bot's name whose file this install lacks is refused saying it is not shipped here."""
    pytest.importorskip("torch")
    monkeypatch.setitem(loading.SHIPPED_BOTS, "bot-eaai", "absent-ppo.safetensors")
    with pytest.raises(ValueError, match=r"^agent 'bot-eaai' is not shipped in this install: .*absent-ppo"):
        load_agent("bot-eaai")


def test_an_unknown_spec_lists_the_grammar():
    """A spec that is nothing the grammar reads names the built-ins, checkpoint:PATH and module:attr."""
    with pytest.raises(ValueError, match=r"unknown agent spec 'nobody'.*bot-eaai, checkpoint:PATH or module:attr"):
        load_agent("nobody")


# --- entry points -------------------------------------------------------------------------------------------------


def installed_plugin(folder: Path) -> Path:
    """A distribution installed in `folder` as pip would (a module and its dist-info), registering three agents: a
    class under its own name, a factory without a mark (registering it declares it), and a class under a built-in's
    name."""
    (folder / "gin_plugin_agents.py").write_text(
        "from tests.agents_for_tests import KnockFirst\n\nclass Plugged(KnockFirst):\n    name = 'plugged'\n\n"
        "def make():\n    return Plugged(seed=11)\n"
    )
    info = folder / "gin_plugin_agents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gin-plugin-agents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[hollywood_gin.agents]\nplugged = gin_plugin_agents:Plugged\nmaker = gin_plugin_agents:make\n"
        "expert = gin_plugin_agents:Plugged\n"
    )
    return folder


def test_an_installed_package_registers_agents_by_name_and_a_built_in_name_wins(tmp_path, monkeypatch):
    """A name in the entry-point group "hollywood_gin.agents" loads the agent it points to (a factory too: the entry
    point declares it), from a file as when typed; the built-in "expert" stays the built-in though a package
    registers that name too; an unknown spec lists the registered names."""
    monkeypatch.syspath_prepend(str(installed_plugin(tmp_path)))
    monkeypatch.delitem(sys.modules, "gin_plugin_agents", raising=False)  # the import below is undone after
    plugged = load_agent("plugged", seed=2, allow_import=False)
    assert type(plugged).__name__ == "Plugged" and plugged.built_with["seed"] == 2 and legal(plugged)
    assert load_agent("maker", allow_import=False).built_with["seed"] == 11
    assert isinstance(load_agent("expert"), ExpertAgent)
    with pytest.raises(ValueError, match=r"unknown agent spec 'plugge'.*, expert, maker, plugged \(installed"):
        load_agent("plugge")


# --- specs read from files ----------------------------------------------------------------------------------------


def user_module(folder: Path, name: str) -> str:
    """A module of the user's in `folder` (on the module path) defining an agent class `Agent`; its name."""
    (folder / f"{name}.py").write_text("from tests.agents_for_tests import KnockFirst as Agent\n")
    return name


def test_a_spec_read_from_a_file_never_imports_its_module(tmp_path, monkeypatch):
    """allow_import=False refuses a module:attr whose module is not imported, saying to pass --import, and the
    module stays unimported; once the user's own code imports it, the same spec resolves."""
    monkeypatch.syspath_prepend(str(tmp_path))
    name = user_module(tmp_path, "never_imported_agents")
    with pytest.raises(ValueError, match=rf"names the module '{name}', which is not imported.*--import {name}"):
        load_agent(f"{name}:Agent", allow_import=False)
    assert name not in sys.modules
    import_modules([name])  # what --import does
    try:
        assert load_agent(f"{name}:Agent", allow_import=False).name == "knock-first"
    finally:
        sys.modules.pop(name, None)


def test_a_saved_match_naming_a_module_never_imports_it_unless_the_user_does(tmp_path, monkeypatch):
    """`play --resume` of a save file whose opponent is module:attr refuses it (one line, the module not imported);
    with `--import MODULE` it resumes against that agent."""
    monkeypatch.syspath_prepend(str(tmp_path))
    name = user_module(tmp_path, "saved_opponent_agents")
    path = tmp_path / "match.json"
    save_match(str(path), Game(seed=3), 0, f"{name}:Agent")
    with pytest.raises(ValueError, match=f"--import {name}"):
        first_session(parse_args(["--resume", str(path)]), web=False)
    assert name not in sys.modules
    try:
        session = first_session(parse_args(["--resume", str(path), "--import", name]), web=False)
        assert session.agent.name == "knock-first" and session.opponent == f"{name}:Agent"
    finally:
        sys.modules.pop(name, None)


#: Code of the standard library a hostile file might name: each would crash, exit, fork, hang or wait for input if
#: it were called (os:system and subprocess:Popen run a command where a file also gives their arguments).
HOSTILE = [
    "os:abort",
    "os:system",
    "subprocess:Popen",
    "builtins:exec",
    "sys:exit",
    "os:fork",
    "signal:pause",
    "builtins:breakpoint",
    "builtins:input",
]


@pytest.mark.parametrize("spec", HOSTILE)
def test_a_save_file_naming_standard_library_code_is_refused_before_anything_is_called(spec, tmp_path):
    """`play --resume` of a save file whose opponent is a standard-library callable (its module imported: `--import`
    even names it) stops with status 2 and one line saying it is not declared an agent: the program neither crashes
    (os:abort), exits quietly (sys:exit), hangs (signal:pause) nor waits for input."""
    path = tmp_path / "hostile.json"
    save_match(str(path), Game(seed=3), 0, spec)
    module = spec.partition(":")[0]
    done = run(tmp_path, "-m", "hollywood_gin_env", "play", "--resume", str(path), "--import", module, timeout=120)
    said = done.stdout + done.stderr
    last = said.strip().splitlines()[-1]
    assert done.returncode == 2, (done.returncode, said)
    assert last.startswith(f"python -m hollywood_gin_env play: error: agent {spec!r} names the "), said
    assert last.endswith("which is not an agent class (with act() and a str name) or a function marked @agent_factory")
    assert "Traceback" not in said


def test_a_training_state_naming_standard_library_code_is_refused_before_anything_is_called(tmp_path):
    """A trainer config holding standard-library callables among its opponents and evaluation opponents, loaded as a
    training state's config is (`load_opponent(..., allow_import=False)`), refuses each in one line naming its key,
    and the process lives on to refuse the next (run in a subprocess: a call to os:abort would kill it)."""
    pytest.importorskip("torch")
    opponents = ", ".join(f'"{spec}" = 1.0' for spec in HOSTILE[:-1])
    code = (
        "import sys\n"
        "from hollywood_gin_trainer.config import load_config\n"
        "from hollywood_gin_trainer.opponents import load_opponent, named_agents\n"
        f"config = load_config({str(ROOT / 'configs' / 'smoke.toml')!r}, sys.argv[1:])\n"
        "for where, spec in named_agents(config):\n"
        "    try:\n"
        "        load_opponent(where, spec, seed=1, allow_import=False)\n"
        "    except ValueError as error:\n"
        "        print(error)\n"
        "    else:\n"
        "        print('loaded', spec)\n"
    )
    sets = [f"selfplay.opponents={{self = 1.0, {opponents}}}", f"eval.opponents=[{HOSTILE[-1]!r}]"]
    done = run(tmp_path, "-c", code, *sets, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    wheres = ["selfplay.opponents"] * (len(HOSTILE) - 1) + ["eval.opponents"]
    lines = done.stdout.splitlines()
    assert len(lines) == len(HOSTILE), done.stdout
    for line, where, spec in zip(lines, wheres, HOSTILE, strict=True):
        assert line.startswith(f"{where} {spec!r}: agent {spec!r} names the "), line
        assert line.endswith("or a function marked @agent_factory"), line


def spy_module() -> tuple[types.ModuleType, list[str]]:
    """A module (not on disk) whose every piece of code records that it ran: a function not declared an agent, a
    module `__getattr__`, an object with a `__getattr__` and a property; the list it records into."""
    ran: list[str] = []
    spy = types.ModuleType("spy_agents")

    def record(**options: object) -> None:
        ran.append("record")

    def module_getattr(name: str) -> object:
        ran.append(f"module.__getattr__({name})")
        raise AttributeError(name)

    class Lookup:
        def __getattr__(self, name: str) -> object:
            ran.append(f"Lookup.__getattr__({name})")
            return record

        @property
        def make(self) -> object:
            ran.append("Lookup.make")
            return record

    spy.record, spy.__getattr__, spy.lookup, spy.Lookup = record, module_getattr, Lookup(), Lookup
    return spy, ran


@pytest.mark.parametrize("allow_import", [False, True])
def test_resolving_a_reference_runs_none_of_the_code_it_names(allow_import, monkeypatch):
    """An imported module's function not declared an agent, a name only its `__getattr__` would give, a path through
    an object and a class's property: each refused in one line, and none of the module's code ran, for a spec from a
    file (allow_import=False) or typed."""
    spy, ran = spy_module()
    monkeypatch.setitem(sys.modules, "spy_agents", spy)
    for spec, message in (
        ("spy_agents:record", "names the function"),
        ("spy_agents:lazy", "the module 'spy_agents' has no attribute 'lazy'"),
        ("spy_agents:lookup.anything", "goes through a value of type Lookup; a path goes through modules and classes"),
        ("spy_agents:Lookup.make", "names a value of type property, which is not an agent class"),
    ):
        with pytest.raises(ValueError) as error:
            load_agent(spec, seed=1, allow_import=allow_import)
        assert str(error.value).startswith(f"agent {spec!r}") and message in str(error.value), str(error.value)
    assert ran == []


DECLARED_MODULE = """
import numpy as np

from hollywood_gin_env.agents import Agent, agent_factory
from tests.agents_for_tests import KnockFirst


class FirstLegal(Agent):
    name = "first-legal"

    def _act(self, observations, action_masks):
        return action_masks.argmax(axis=1).astype(np.int64)


@agent_factory
def make(seed=None):
    return KnockFirst(seed=seed)


class NamedWhenBuilt:
    def __init__(self):
        self.name = "named-when-built"

    def act(self, observations, action_masks):
        return action_masks.argmax(axis=1).astype(np.int64)


Marked = agent_factory(type("Marked", (NamedWhenBuilt,), {}))
"""


def test_a_declared_agent_class_and_factory_resolve_from_a_file_once_imported(tmp_path, monkeypatch):
    """An `Agent` subclass, a function marked @agent_factory and a class so marked (its name set only when built), in
    a module the user imported (`--import`), resolve from a file (allow_import=False) and play, and the same class
    unmarked is refused; a saved match naming the factory resumes against it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    name = "declared_file_agents"
    (tmp_path / f"{name}.py").write_text(DECLARED_MODULE)
    path = tmp_path / "match.json"
    save_match(str(path), Game(seed=3), 0, f"{name}:make")
    try:
        import_modules([name])
        assert legal(load_agent(f"{name}:FirstLegal", allow_import=False))
        made = load_agent(f"{name}:make", seed=6, allow_import=False)
        assert made.built_with["seed"] == 6 and legal(made)
        assert load_agent(f"{name}:Marked", allow_import=False).name == "named-when-built"
        with pytest.raises(ValueError, match=rf"names the class {name}.NamedWhenBuilt, which is not an agent class"):
            load_agent(f"{name}:NamedWhenBuilt", allow_import=False)
        session = first_session(parse_args(["--resume", str(path), "--import", name]), web=False)
        assert session.agent.name == "knock-first" and session.opponent == f"{name}:make"
    finally:
        sys.modules.pop(name, None)


def test_a_session_given_a_spec_by_the_user_imports_it():
    """A Session built from a spec the user typed (allow_import=True, the default) resolves module:attr."""
    session = Session(Game(seed=1), 0, f"{AGENTS}:KnockFirst")
    assert session.agent.name == "knock-first"


# --- the programs -------------------------------------------------------------------------------------------------


def test_the_evaluator_plays_a_module_attr_agent_from_the_python_api():
    """round_robin takes module:attr specs as it takes built-in names, labelled by NAME=SPEC."""
    report = round_robin([f"k={AGENTS}:KnockFirst", "random"], 4, seed=1, rules=SHORT)
    assert [a["name"] for a in report["agents"]] == ["k", "random"]
    assert report["pairs"][0]["matches"] == 4 and sum(report["pairs"][0]["illegal_actions"]) == 0


def test_evaluate_takes_a_module_in_the_working_folder_however_it_is_started(tmp_path):
    """`--agents mine=my_agents:KnockFirst` finds my_agents.py in the folder the program runs in, whether it is
    started as `python -m hollywood_gin_env evaluate` or as a script from elsewhere (`python /path/evaluate.py`)."""
    shutil.copy(ROOT / "tests" / "agents_for_tests.py", tmp_path / "my_agents.py")
    argv = ["evaluate", "--agents", "mine=my_agents:KnockFirst", "random", "--matches", "4", "--no-progress"]
    argv += ["--rules", "game_target=30"]
    as_module = run(tmp_path, "-m", "hollywood_gin_env", *argv)
    assert as_module.returncode == 0, as_module.stderr
    assert "mine vs random" in as_module.stdout
    as_script = run(tmp_path, str(ROOT / "evaluate.py"), *argv[1:])
    assert as_script.returncode == 0, as_script.stderr
    assert as_script.stdout.splitlines()[:3] == as_module.stdout.splitlines()[:3]


def test_evaluate_imports_the_modules_named_by_import_before_it_builds_agents(tmp_path):
    """`--import tests.agents_registering` runs that module (which registers an agent) before the agents are built;
    without it the agent is unknown, in one line."""
    argv = ["-m", "hollywood_gin_env", "evaluate", "--agents", f"{AGENTS}:registered", "random", "--matches", "2"]
    argv += ["--no-progress", "--rules", "game_target=30"]
    without = run(tmp_path, *argv)
    assert without.returncode == 2 and "failed when called: KeyError: 'knocker'" in without.stderr, without.stderr
    assert "Traceback" not in without.stderr
    done = run(tmp_path, *argv, "--import", "tests.agents_registering")
    assert done.returncode == 0 and "registered vs random" in done.stdout, done.stderr


def test_a_schedule_takes_the_modules_its_workers_import_as_a_tuple_of_names():
    """Schedule(imports=[...]) keeps a tuple of module names; a bare string or a non-name is refused by name."""
    assert Schedule(imports=["tests.agents_registering"]).imports == ("tests.agents_registering",)
    for bad in ("tests.agents_registering", ["not a module"], [3]):
        with pytest.raises(ValueError, match=r"imports=.* is not allowed: give a tuple of module names"):
            Schedule(imports=bad)


@pytest.mark.parametrize("program", ["evaluate", "play", "train", "exploit"])
def test_every_program_refuses_an_import_that_fails_in_one_line(program, capsys):
    """`--import no_such_module_here` stops every program with status 2 and one line naming the module."""
    if program in ("train", "exploit"):
        pytest.importorskip("torch")
    from hollywood_gin_env import cli

    argv = [program, "--import", "no_such_module_here"] + (["bot"] if program == "exploit" else [])
    try:
        code = cli.main(argv)
    except SystemExit as exited:
        code = exited.code
    shown = capsys.readouterr()
    said = shown.err + shown.out  # play prints its errors on its console, in red
    last = said.strip().splitlines()[-1]  # after the usage, where argparse prints it
    assert code == 2 and "--import no_such_module_here: cannot import the module 'no_such_module_here'" in last, said
    assert "Traceback" not in said, said


@pytest.mark.slow
def test_ray_workers_build_a_module_attr_agent_and_import_the_modules_named_by_import(tmp_path):
    """With --workers 2 on a local Ray, each worker resolves `my_agents:KnockFirst` (a module in the user's working
    folder) and imports `--import` modules before it builds agents: the report is the one of one worker."""
    shutil.copy(ROOT / "tests" / "agents_for_tests.py", tmp_path / "my_agents.py")
    argv = ["-m", "hollywood_gin_env", "evaluate", "--agents", "my_agents:KnockFirst", f"{AGENTS}:registered"]
    argv += ["random", "--matches", "8", "--chunk-matches", "2", "--no-progress", "--rules", "game_target=30"]
    argv += ["--import", "tests.agents_registering", "--json"]
    one = run(tmp_path, *argv, "one.json")
    assert one.returncode == 0, one.stderr
    two = run(tmp_path, *argv, "two.json", "--workers", "2")
    assert two.returncode == 0, two.stderr
    reports = [without_timing(json_file(tmp_path / name)) for name in ("one.json", "two.json")]
    assert reports[0] == reports[1] and len(reports[0]["pairs"]) == 3


def json_file(path: Path) -> dict:
    """A JSON report's contents."""
    return json.loads(path.read_text())
