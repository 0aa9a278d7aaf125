"""docs/EXTENDING.md runs as written: every file of its worked examples is written, as shown, into one empty folder
and every command and Python block is run there in the page's order, at a test's size.

The page's blocks: ```python and ```toml blocks whose first line is `# NAME.py` or `# NAME.toml` are files; other
```python blocks run in the folder (`python -c`) after what comes before them; each line of a ```bash block is a
command run from the folder, `hollywood-gin` as `python -m hollywood_gin_env` of this checkout; ```text blocks are
excerpts of what a user sees, not run. Sizes: a `train` or `exploit` that starts a run gets SMOKE_SIZES (and
`--updates 2` or `--set train.updates=2`), `--matches` plays MATCHES; `python -m pip install -e .` installs the
folder's pyproject.toml as pip would list it (its modules and a dist-info with its entry points, in a folder on the
module path), so the commands after it find the names it registers; `play` is told `quit`; a command whose comment
says `refused` must fail with one error line and no traceback. The examples run in order on the first test that
needs them (c plays the agent of a and the checkpoint of b), and nothing is written outside the folder.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tensorboard")

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "EXTENDING.md"
#: configs/smoke.toml's sizes, for a run the page starts (its network and opponents stay the page's).
SMOKE_SIZES = [
    "train.max_minutes=0",
    "train.torch_threads=1",
    "env.num_envs=8",
    "ppo.rollout_steps=16",
    "ppo.minibatch_size=64",
    "warmstart.decisions=256",
    "warmstart.epochs=1",
    "warmstart.minibatch_size=128",
    "selfplay.snapshot_every=1",
    "eval.every=2",
    "eval.matches=4",
]
UPDATES = 2
MATCHES = 20
FILE = re.compile(r"# ([\w.-]+\.(?:py|toml))")
EXAMPLE = re.compile(r"^## ([a-d])\. ", flags=re.M)
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", flags=re.M | re.S)


@dataclass
class Block:
    """One fenced block of the page: its language, the file it is (or None) and its text."""

    language: str
    name: str | None
    source: str


def examples(text: str) -> dict[str, list[Block]]:
    """letter -> the blocks of the page's example of that letter, in order."""
    parts = EXAMPLE.split(text)
    out = {}
    for letter, body in zip(parts[1::2], parts[2::2], strict=True):
        blocks = []
        for language, source in FENCE.findall(body):
            first = source.splitlines()[0] if source else ""
            named = FILE.fullmatch(first) if language in ("python", "toml") else None
            blocks.append(Block(language, named.group(1) if named else None, source))
        out[letter] = blocks
    return out


def command_line(line: str) -> tuple[list[str], str]:
    """(argv, its comment) of a line of a bash block."""
    command, _, comment = line.partition("  #")
    return shlex.split(command), comment.strip()


def sized(argv: list[str]) -> list[str]:
    """A command of the hollywood-gin program (its arguments) at the test's size (module docstring)."""
    argv = [str(MATCHES) if i and argv[i - 1] == "--matches" else arg for i, arg in enumerate(argv)]
    program = argv[0] if argv else ""
    if program not in ("train", "exploit") or "--resume" in argv:
        return argv
    argv = [str(UPDATES) if i and argv[i - 1] == "--updates" else arg for i, arg in enumerate(argv)]
    if program == "exploit" and "--updates" not in argv:
        argv += ["--updates", str(UPDATES)]
    if program == "train":
        argv += ["--set", f"train.updates={UPDATES}"]
    return argv + [part for size in SMOKE_SIZES for part in ("--set", size)]


@dataclass
class Page:
    """The folder the page's examples run in, and what they have run and printed."""

    folder: Path
    site: Path
    done: list[str] = field(default_factory=list)
    outputs: dict[str, list[subprocess.CompletedProcess]] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The checkout's packages first, then what the page has installed; one thread of everything."""
        path = os.pathsep.join([str(ROOT), str(self.site)])
        return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}

    def run_through(self, letter: str) -> None:
        """Run the page's examples up to `letter`, each once, in order."""
        for key, blocks in examples(DOC.read_text(encoding="utf-8")).items():
            if key > letter:
                break
            if key not in self.done:
                self.outputs[key] = [done for block in blocks for done in self.run_block(block)]
                self.done.append(key)

    def run_block(self, block: Block) -> list[subprocess.CompletedProcess]:
        """Write a file block; run a Python or bash block; what each process printed."""
        if block.name:
            (self.folder / block.name).write_text(block.source, encoding="utf-8")
            return []
        if block.language == "python":
            return [self.run([sys.executable, "-c", block.source], block.source)]
        if block.language == "bash":
            return [self.run_command(line) for line in block.source.splitlines() if line.strip()]
        assert block.language == "text", f"a {block.language} block that is no file: name it `# NAME.{block.language}`"
        return []

    def run_command(self, line: str) -> subprocess.CompletedProcess:
        argv, comment = command_line(line)
        if argv == ["python", "-m", "pip", "install", "-e", "."]:
            return self.install()
        assert argv[0] == "hollywood-gin", f"the page runs hollywood-gin and pip only: {line}"
        argv = [sys.executable, "-m", "hollywood_gin_env", *sized(argv[1:])]
        stdin = "quit\n" if argv[3] == "play" else ""
        done = self.run(argv, line, stdin=stdin, check=not comment.startswith("refused"))
        if comment.startswith("refused"):
            errors = [text for text in done.stderr.splitlines() if "error:" in text]
            assert done.returncode != 0 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
        return done

    def run(self, argv: list[str], shown: str, stdin: str = "", check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            argv, cwd=self.folder, env=self.env(), input=stdin, capture_output=True, text=True, timeout=300
        )
        if check:
            assert done.returncode == 0, (
                f"{shown}\n--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr}"
            )
        return done

    def install(self) -> subprocess.CompletedProcess:
        """What `pip install -e .` of the folder's pyproject.toml lists: its modules and its dist-info."""
        project = tomllib.loads((self.folder / "pyproject.toml").read_text(encoding="utf-8"))
        for module in project["tool"]["setuptools"]["py-modules"]:
            shutil.copy(self.folder / f"{module}.py", self.site)
        meta = project["project"]
        info = self.site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
        groups = [
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
            for group, entries in meta["entry-points"].items()
        ]
        (info / "entry_points.txt").write_text("\n".join(groups))
        return subprocess.CompletedProcess(["pip"], 0, "", "")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Page:
    """An empty folder for the page's files, and one for what it installs."""
    return Page(tmp_path_factory.mktemp("extending"), tmp_path_factory.mktemp("site"))


def _printed(page: Page, letter: str) -> str:
    return "".join(done.stdout + done.stderr for done in page.outputs[letter])


@pytest.mark.nojit
def test_the_page_is_four_examples_whose_blocks_the_test_reads():
    """Every fenced block of docs/EXTENDING.md is in one of its examples a-d (none is left unrun), every ```toml
    block is a file, and the four examples each write a file of their own."""
    text = DOC.read_text(encoding="utf-8")
    found = examples(text)
    assert sorted(found) == ["a", "b", "c", "d"]
    assert sum(len(blocks) for blocks in found.values()) == len(FENCE.findall(text))
    for letter, blocks in found.items():
        assert any(block.name for block in blocks), letter
        assert all(block.name for block in blocks if block.language == "toml"), letter
        assert {block.language for block in blocks} <= {"python", "toml", "bash", "text"}, letter


@pytest.mark.nojit
def test_a_run_the_page_starts_is_sized_as_the_smoke_test_and_a_resumed_one_is_left_as_saved():
    """train and exploit get the smoke sizes and UPDATES updates, evaluate plays MATCHES; --resume takes its sizes
    from the saved run."""
    smoke = [part for size in SMOKE_SIZES for part in ("--set", size)]
    train = sized(["train", "--config", "my.toml", "--matches", "400"])
    assert train == ["train", "--config", "my.toml", "--matches", str(MATCHES), "--set", "train.updates=2", *smoke]
    exploit = sized(["exploit", "mine=m:A", "--updates", "300"])
    assert exploit == ["exploit", "mine=m:A", "--updates", str(UPDATES), *smoke]
    assert sized(["exploit", "expert"]) == ["exploit", "expert", "--updates", str(UPDATES), *smoke]
    assert sized(["train", "--resume", "runs/x"]) == ["train", "--resume", "runs/x"]
    assert sized(["evaluate", "--matches", "400"]) == ["evaluate", "--matches", str(MATCHES)]


@pytest.mark.nojit
def test_the_lines_touched_are_the_files_lines():
    """Each example's "Lines touched" names its files with their true line counts."""
    text = DOC.read_text(encoding="utf-8")
    files = {block.name: block.source for blocks in examples(text).values() for block in blocks if block.name}
    stated = re.findall(r"([\w.-]+\.(?:py|toml)) \((\d+) lines\)", text)
    assert {name for name, _ in stated} == set(files)
    for name, count in stated:
        assert len(files[name].splitlines()) == int(count), name


def test_a_your_agent_plays_on_the_command_line_in_play_in_an_env_and_by_its_registered_name(page):
    """my_agents.py's agent is evaluated by spec against expert, played in `play` and as the env's opponent, and,
    its package installed, evaluated by the name the package registers."""
    page.run_through("a")
    printed = _printed(page, "a")
    assert f"{MATCHES} matches per pair" in printed and "mine vs expert" in printed
    assert "You play knock-first" in printed and "knock-first vs expert" in printed
    assert "-1.0\n" in [done.stdout for done in page.outputs["a"]]  # the env's match, lost by its random learner


@pytest.mark.slow  # three smoke-size trainings and an evaluation (a minute): CI's second command runs it
def test_b_your_network_trains_resumes_with_import_and_plays_as_a_checkpoint(page):
    """my_networks.py's MLP trains, stops, is refused on resume without --import, resumes with it, and its policy
    file names the network and plays as checkpoint: in a fresh process."""
    page.run_through("b")
    printed = _printed(page, "b")
    assert "stopped at update 1/2" in printed and "pass --import my_networks" in printed
    assert f"done: {UPDATES} updates" in printed and "mlp vs random" in printed
    assert "{'name': 'my_networks:mlp', 'kwargs': {'hidden_sizes': [256, 256]}} torch.Size([4, 107])" in printed


@pytest.mark.slow  # two smoke-size trainings after those of a and b: CI's second command runs it
def test_c_opponents_of_the_pool_are_a_table_and_exploit_is_the_trainer_with_one(page):
    """The pool run trains against self, random, the agent of a and the checkpoint of b, the names its config
    table gives; exploit's run is the trainer with the target its only opponent."""
    page.run_through("c")
    pool = tomllib.loads((page.folder / "runs" / "pool" / "config.toml").read_text(encoding="utf-8"))
    assert list(pool["selfplay"]["opponents"]) == [
        "self",
        "random",
        "mine=my_agents:KnockFirst",
        "checkpoint:runs/mlp/policy.safetensors",
    ]
    br = tomllib.loads((page.folder / "runs" / "br" / "config.toml").read_text(encoding="utf-8"))
    assert br["selfplay"]["opponents"] == {"mine=my_agents:KnockFirst": 1.0}
    assert "best response vs mine" in _printed(page, "c")


@pytest.mark.slow  # two smoke-size trainings: CI's second command runs it
def test_d_n_step_returns_train_in_place_of_gae_and_resume_with_import(page):
    """my_advantages.py's n-step returns train a run that names them in its config, stops and resumes with
    --import, and the page's chain gives the values it says."""
    page.run_through("d")
    config = tomllib.loads((page.folder / "runs" / "nstep" / "config.toml").read_text(encoding="utf-8"))
    assert config["ppo"]["advantages"] == "my_advantages:n_step"
    printed = _printed(page, "d")
    assert f"done: {UPDATES} updates" in printed and "[0.405 0.45  0.5  ]" in printed
