"""The README and the docs run as written, and everything they link to is there.

Every ```python block of README.md, docs/*.md and benchmarks/README.md is run on its own, in a fresh interpreter, so
a block that leans on an import or a name from an earlier block fails here. New blocks are picked up automatically. A
block that trains is shortened: `.learn(N)` and `total_timesteps=` / `total_steps=` / `timesteps=` / `num_steps=`
with an integer literal run at most STEP_BUDGET steps, so a training block must state its length in one of those
forms. A block that truly cannot run here (say, one that needs a trained checkpoint the repository does not ship)
opts out with a first line the reader sees too, `# not run by tests/test_readme.py: <why>`; it is reported as
skipped, never as passed. A new document under docs/ is picked up too, and the README must link it. The blocks of
docs/EXTENDING.md run in their worked examples' folder, after the files and commands before them:
tests/test_extending.py runs every one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from hollywood_gin_env.rules.options import PRESETS, Rules

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RULES_DOC = ROOT / "docs" / "RULES.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]
README_MAX_LINES = 250  # what a newcomer needs, on a screen or two; the rest lives in docs/
OPT_OUT = "# not run by tests/test_readme.py:"
STEP_BUDGET = 512
_STEPS = re.compile(r"(\.learn\(\s*|\b(?:total_timesteps|total_steps|timesteps|num_steps)\s*=\s*)([0-9][0-9_]*)")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, dedented source) of every ```python fenced block of a Markdown text."""
    blocks, current, start, indent = [], None, 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        if current is None:
            match = re.match(r"^(\s*)```python\s*$", line)
            if match:
                current, start, indent = [], number + 1, match.group(1)
        elif line.strip() == "```":
            blocks.append((start, textwrap.dedent("\n".join(current)) + "\n"))
            current = None
        else:
            current.append(line[len(indent) :] if line.startswith(indent) else line)
    assert current is None, f"the ```python block from line {start} is never closed"
    return blocks


def shorten_training(source: str) -> str:
    """The block with every step count it states cut to STEP_BUDGET."""
    return _STEPS.sub(lambda m: m.group(1) + str(min(int(m.group(2).replace("_", "")), STEP_BUDGET)), source)


def _name(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


#: Documents whose blocks another test runs in their context (module docstring).
RUN_IN_CONTEXT = {ROOT / "docs" / "EXTENDING.md"}
BLOCKS = [
    (_name(doc), line, source)
    for doc in DOCS
    if doc not in RUN_IN_CONTEXT
    for line, source in python_blocks(doc.read_text(encoding="utf-8"))
]


def _scratch_dir(tmp_path: Path) -> Path:
    """A working folder that sees the repository's files (configs, scripts) but keeps what a block writes."""
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


# a block that trains Stable-Baselines3's MaskablePPO takes 5-12 s: CI's second command runs it
BLOCK_PARAMS = [
    pytest.param(doc, line, source, id=f"{doc}:{line}", marks=pytest.mark.slow if "sb3_contrib" in source else ())
    for doc, line, source in BLOCKS
]


@pytest.mark.parametrize(("doc", "line", "source"), BLOCK_PARAMS)
def test_docs_python_block_runs_on_its_own(doc, line, source, tmp_path):
    """The block, with only its own imports, exits 0 in a fresh interpreter (training blocks shortened)."""
    first = source.lstrip().splitlines()[0] if source.strip() else ""
    if first.startswith(OPT_OUT):
        reason = first[len(OPT_OUT) :].strip()
        assert reason, f"{doc}:{line}: an opted-out block must say why"
        pytest.skip(f"{doc}:{line} opts out: {reason}")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    env.pop("NUMBA_DISABLE_JIT", None)  # the blocks run the compiled engine, as a reader would
    out = subprocess.run(
        [sys.executable, "-c", shorten_training(source)],
        cwd=_scratch_dir(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"{doc}:{line} failed:\n{source}\n--- stderr ---\n{out.stderr[-4000:]}"


@pytest.mark.nojit
def test_the_block_finder_and_the_step_budget():
    """The finder sees every fenced python block (indented ones too) and the budget rewrites what it should."""
    text = "x\n```python\nimport a\n```\n- item\n  ```python\n  b = 1\n  ```\n```bash\nls\n```\n"
    assert python_blocks(text) == [(3, "import a\n"), (7, "b = 1\n")]
    assert len(BLOCKS) >= 7 and all("import" in source for _, _, source in BLOCKS if not source.startswith(OPT_OUT))
    assert (
        shorten_training("m.learn(100_000)\nm.learn(total_timesteps=64)") == "m.learn(512)\nm.learn(total_timesteps=64)"
    )
    assert shorten_training("train(cfg, total_steps=2_000_000)") == "train(cfg, total_steps=512)"


@pytest.mark.nojit
def test_training_blocks_set_torch_threads_and_say_why():
    """Every block that trains with torch sets one thread, and its document explains the oversubscription."""
    trains = re.compile(r"^\s*(import torch|from (sb3_contrib|stable_baselines3))", flags=re.M)
    torch_blocks = [(doc, source) for doc, _, source in BLOCKS if trains.search(source)]
    assert torch_blocks, "the docs show no Stable-Baselines3 block"
    for doc, source in torch_blocks:
        assert "torch.set_num_threads(1)" in source, source
        assert "oversubscribe" in (ROOT / doc).read_text(encoding="utf-8"), doc


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.nojit
@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_links_point_into_the_repository(doc):
    """Every relative link names a file of the repository (and an existing heading); nothing points to shared/."""
    text = doc.read_text(encoding="utf-8")
    assert "shared/" not in text, "users never get shared/: link the repository's own documents"
    links = [target for target in _LINK.findall(text) if not re.match(r"[a-z]+:", target)]
    if doc == README:
        documents = {_name(d) for d in DOCS if d != README}
        assert "LICENSE" in links and documents <= {t.partition("#")[0] for t in links}, (
            f"the README links none of {sorted(documents - set(links))}: a newcomer finds every document from it"
        )
    for target in links:
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        assert file.is_file(), f"{_name(doc)} links to {target}, which is not in the repository"
        if anchor:
            headings = re.findall(r"^#+ (.*)$", file.read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, f"{_name(doc)}: no heading for #{anchor} in {path}"


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row; a `|` inside backticks or escaped as \\| is text, not a border."""
    cells, current, code, i = [], "", False, 0
    body = row.strip()[1:-1] if row.strip().endswith("|") else row.strip()[1:]
    while i < len(body):
        char = body[i]
        if char == "\\" and body[i + 1 : i + 2] == "|":
            current, i = current + "|", i + 2
            continue
        if char == "`":
            code = not code
        if char == "|" and not code:
            cells.append(current)
            current = ""
        else:
            current += char
        i += 1
    return [*cells, current]


def table_shape_errors(text: str) -> list[str]:
    """One error ("line N: k cells under m columns") per table row whose cell count differs from its header's."""
    errors, columns, code = [], None, False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            code = not code
        if code or not line.lstrip().startswith("|"):
            columns = None
            continue
        count = len(_cells(line))
        if columns is None:
            columns = count
        elif count != columns:
            errors.append(f"line {number}: {count} cells under {columns} columns")
    return errors


@pytest.mark.nojit
def test_table_shape_checker():
    """The checker counts cells as GitHub does: code spans and escaped bars do not split a cell."""
    good = "| a | b |\n|---|---|\n| `x | y` | z \\| w |\n"
    assert table_shape_errors(good) == []
    assert table_shape_errors("| a | b | c |\n|---|---|---|\n| 1 | 2 |\n") == ["line 3: 2 cells under 3 columns"]
    assert table_shape_errors("```\n| a |\n| b | c |\n```\n") == []


@pytest.mark.nojit
@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_every_table_row_fills_its_columns(doc):
    """No table row has more or fewer cells than its header (one README row once had 5 under 6)."""
    assert table_shape_errors(doc.read_text(encoding="utf-8")) == [], _name(doc)


@pytest.mark.nojit
def test_readme_stays_short():
    """The README keeps to what a newcomer needs; references belong in docs/."""
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to docs/"


@pytest.mark.nojit
def test_the_quick_start_gives_the_main_job_s_time_and_memory_and_what_a_busy_machine_costs():
    """The main job's row names its minutes and its memory at the peak (the warm start's), and the timings' pointer
    says how much longer a busy machine took, so a new user can plan the run."""
    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| main job"))
    assert re.search(r"about \d+ minutes", row) and re.search(r"\d+ GB of memory", row), row
    assert "at the peak" in row, row
    assert re.search(r"a busy one.*took [\d–]+× as long", text.replace("\n", " ")), "the busy machine's cost"


def _shown(value: object) -> str:
    return (
        f'`"{value}"`'
        if isinstance(value, str)
        else f"`{value}`"
        if value is None or isinstance(value, bool)
        else str(value)
    )


@pytest.mark.nojit
def test_rules_doc_lists_every_option_with_its_default():
    """docs/RULES.md §4's table of options has one row per Rules option, with the default Rules() holds, and no other
    rows."""
    text = RULES_DOC.read_text(encoding="utf-8")
    section = text[text.index("## 4. Options") : text.index("### Presets")]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, flags=re.M))
    defaults = Rules().to_dict()
    assert set(rows) == {f.name for f in fields(Rules)}
    for name, shown in rows.items():
        assert shown == _shown(defaults[name]), f"{name}: docs say {shown}, Rules() holds {defaults[name]!r}"
    for example in [f"E{n}" for n in range(1, 13)] + [f"R{n}" for n in range(1, 40)]:
        assert f"**{example}" in text, f"docs/RULES.md lacks {example}"


@pytest.mark.nojit
def test_ci_runs_the_readme_test_commands_and_the_slow_tests():
    """Each pytest command the README gives is a line of .ci/run, and together they run everything (not slow, slow)."""
    commands = [
        part.strip()
        for cell in re.findall(r"`([^`\n]*python -m pytest[^`\n]*)`", README.read_text(encoding="utf-8"))
        for part in cell.split("&&")
    ]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert 'python -m pytest -q -m "not slow"' in commands and "python -m pytest -q -m slow" in commands, commands
    missing = [command for command in commands if command not in ci]
    assert missing == [], f".ci/run does not run the README's {missing}"


@pytest.mark.nojit
def test_license_file_and_pyproject_agree():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert any(dep.lower().startswith("pillow") for dep in project["dependencies"])


@pytest.mark.nojit
def test_rules_doc_lists_every_preset_with_the_options_it_changes():
    """docs/RULES.md's presets table has a row per preset naming exactly the options it changes, with their values."""
    text = RULES_DOC.read_text(encoding="utf-8")
    section = text[text.index("### Presets") : text.index("## 5.")]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, flags=re.M))
    assert list(rows) == list(PRESETS)
    for name, cell in rows.items():
        shown = dict(re.findall(r"`(\w+)=([^`]+)`", cell))
        assert shown == {key: _shown(value).strip("`") for key, value in PRESETS[name].items()}, name
