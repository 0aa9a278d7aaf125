"""A results folder of benchmarks/learn.py read as data: its records checked, its policy files confined to it.

A folder may come from anyone (a colleague's run, an archive), so reading one runs no code and costs what this
module allows: a record (marks.json, scores.json) is a regular file of at most MAX_RECORD_BYTES inside the folder,
parsed as JSON and checked against its schema (pydantic, strict: a count is an int, a rate a finite number); a
policy is a file the benchmark could have named (`policy-<label>.safetensors` or `.zip`) that resolves inside the
folder (a symlink pointing out of it is refused), a regular file of at most MAX_POLICY_BYTES (not a device, not a
FIFO: support/userfiles.py). Every refusal is one `ResultsError` (a ValueError) naming the file.

Which files are loaded is the benchmark's business (learn.py): a MaskablePPO `.zip` is a pickle, so loading one
runs its code, and only the zips the benchmark trained in the same run are loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from hollywood_gin_env.support.tensorfile import MAX_FILE_BYTES
from hollywood_gin_env.support.userfiles import UserFileError, format_bytes, open_user_file, read_user_file, shown

MAX_RECORD_BYTES = 16 << 20  # a scores.json keeps about 400 bytes a policy: this holds tens of thousands
MAX_POLICY_BYTES = MAX_FILE_BYTES  # as a checkpoint's reader allows; the benchmark's policies are a few MB
MAX_MARKS = 1000
POLICY_NAME = re.compile(r"policy-[A-Za-z0-9_.+-]{1,64}\.(?:safetensors|zip)")
STRICT = ConfigDict(strict=True, allow_inf_nan=False)


class ResultsError(ValueError):
    """A results folder's file that this benchmark does not read; the one-line message names it and why."""


class Mark(TypedDict):
    """One saved policy of a trainer: the mark (minutes) it stands for, its file, when it was saved."""

    __pydantic_config__ = STRICT  # type: ignore[misc]
    mark: float
    policy: str
    minutes: float


class MarksRecord(TypedDict):
    """A trainer's marks.json (its other keys are kept, not read)."""

    __pydantic_config__ = STRICT  # type: ignore[misc]
    marks: Annotated[list[Mark], Field(max_length=MAX_MARKS)]
    decisions: int
    decisions_per_s: float


class Figures(TypedDict):
    """One policy's figures against one opponent (summarize_pair's; the others are kept, not read)."""

    __pydantic_config__ = STRICT  # type: ignore[misc]
    match_win_rate: float
    match_win_ci95: Annotated[list[float], Field(min_length=2, max_length=2)]
    points_per_hand: float


MARKS = TypeAdapter(MarksRecord)
SCORES = TypeAdapter(dict[str, dict[str, Figures]])


def inside(root: Path, path: Path) -> Path:
    """path with its symlinks resolved, if that lies inside root (itself resolved); ResultsError otherwise."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ResultsError(f"{shown(path)} leads to {shown(resolved)}, outside the results folder {shown(root)}")
    return resolved


def read_record(root: Path, path: Path, schema: TypeAdapter) -> Any:
    """The JSON record at path (inside root, bounded), as read if schema accepts it; ResultsError naming the file."""
    redo = "(delete it to train or score again)"
    try:
        data = json.loads(read_user_file(inside(root, path), MAX_RECORD_BYTES, "results file"))
        schema.validate_python(data)
        return data  # as read: what the schema does not name is kept, for the benchmark to write back
    except (OSError, UserFileError) as error:  # its message names the file
        raise ResultsError(f"{error} {redo}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ResultsError(f"cannot read {shown(path)}: {error} {redo}") from None
    except RecursionError:
        raise ResultsError(f"cannot read {shown(path)}: its JSON nests too deeply {redo}") from None
    except ValidationError as error:
        raise ResultsError(f"{shown(path)} is not this benchmark's record: {first_problem(error)} {redo}") from None


def first_problem(error: ValidationError) -> str:
    """The first of pydantic's problems in one line: where and what ("marks.0.policy: Field required")."""
    problem = error.errors()[0]
    where = ".".join(map(str, problem["loc"])) or "the top level"
    return f"{where[:120]}: {problem['msg']}"


def check_marks(path: Path, record: dict) -> None:
    """ResultsError unless every mark names a policy file the benchmark could have written."""
    for mark in record["marks"]:
        if not POLICY_NAME.fullmatch(mark["policy"]):
            raise ResultsError(
                f"{shown(path)} names the policy {mark['policy']!r:.120}: a policy is a file of the results folder "
                "named policy-LABEL.safetensors or policy-LABEL.zip"
            )


def policy_digest(root: Path, path: Path) -> str:
    """The SHA-256 of the policy file at path (inside root, a regular file of at most MAX_POLICY_BYTES)."""
    try:
        with open_user_file(inside(root, path), MAX_POLICY_BYTES, "policy file") as f:
            digest, left = hashlib.sha256(), MAX_POLICY_BYTES + 1
            while left > 0 and (chunk := f.read(min(left, 1 << 20))):
                digest.update(chunk)
                left -= len(chunk)
    except (OSError, UserFileError) as error:  # its message names the file
        raise ResultsError(str(error)) from None
    if left <= 0:
        raise ResultsError(f"{shown(path)} holds more than {format_bytes(MAX_POLICY_BYTES)}; at most that is read")
    return digest.hexdigest()


def is_pickle(policy: str) -> bool:
    """True for a MaskablePPO model file (sb3's zip, whose loading unpickles)."""
    return os.path.splitext(policy)[1] == ".zip"
