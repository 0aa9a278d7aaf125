"""scripts/convert_checkpoint.py: a policy saved with torch.save converts to the same weights in the current format;
every file it cannot convert (an empty file, a device, a FIFO, a damaged archive, a zip bomb, a pickle torch.load
refuses, NaN weights) is one line on stderr with exit status 1, nothing written; an existing output is replaced
only with --force."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents.checkpoint import CHECKPOINT_VERSION, load_network  # noqa: E402
from hollywood_gin_env.agents.networks import MAX_PARAMETERS  # noqa: E402
from hollywood_gin_env.agents.policy import build_policy, check_policy_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import convert_checkpoint  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CONFIG = {"hidden_sizes": [16], "card_channels": 4}


def _old_policy(path: Path, **changes) -> Path:
    """A policy saved with torch.save as version 4 wrote it (changes: its keys replaced)."""
    torch.manual_seed(0)
    config = check_policy_config(CONFIG)
    data = {"format": "hollywood-gin-policy", "version": 4, "config": config}
    data |= {"state_dict": build_policy(config).state_dict(), "training": {"commit": "abc"}}
    torch.save(data | changes, path)
    return path


def _convert(old: Path | str, new: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "scripts/convert_checkpoint.py", str(old), str(new), *flags]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=ENV)


def test_a_torch_save_policy_converts_to_the_same_weights(tmp_path):
    """The weights copied exactly into a file of the current version naming the network "cards", the training
    record kept; a file of another version is refused."""
    old, new = _old_policy(tmp_path / "old.pt"), tmp_path / "new.safetensors"
    done = _convert(old, new)
    assert done.returncode == 0 and done.stdout.strip() == f"wrote {new}", done.stderr
    network, metadata = load_network(new)
    assert metadata["version"] == CHECKPOINT_VERSION and metadata["network"]["name"] == "cards"
    assert metadata["training"] == {"commit": "abc"} and metadata["deterministic"] is True
    state = torch.load(old, weights_only=True)["state_dict"]
    assert all(torch.equal(network.state_dict()[name], tensor) for name, tensor in state.items())
    _old_policy(old, version=3)
    done = _convert(old, tmp_path / "other.safetensors")
    assert done.returncode == 1 and "reads format 'hollywood-gin-policy' version 4 only" in done.stderr


def test_an_existing_output_is_replaced_only_with_force(tmp_path):
    old, new = _old_policy(tmp_path / "old.pt"), tmp_path / "new.safetensors"
    new.write_bytes(b"mine")
    done = _convert(old, new)
    assert done.returncode == 1 and f"{new} exists; pass --force to replace it" in done.stderr
    assert new.read_bytes() == b"mine"
    assert _convert(old, new, "--force").returncode == 0 and load_network(new)[1]["network"]["name"] == "cards"


def _zip_bomb(path: Path) -> Path:
    """A 1 MB zip whose one member inflates to 1 GiB."""
    data = io.BytesIO()
    with (
        zipfile.ZipFile(data, "w", compression=zipfile.ZIP_DEFLATED) as bomb,
        bomb.open("archive/data/0", "w", force_zip64=True) as out,
    ):
        for _ in range(1024):
            out.write(bytes(1 << 20))
    path.write_bytes(data.getvalue())
    return path


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


class _Shell:
    def __reduce__(self):
        return (os.system, ("true",))


#: name -> (how to make the file at a path, what its one line says)
REFUSED = {
    "empty file": (lambda p: _written(p, b""), "(0 bytes) is not a zip archive, torch.save's format"),
    "bad header": (lambda p: _written(p, b"PK\x03\x04" + b"garbage" * 20), "damaged zip archive"),
    "truncated archive": (lambda p: _written(p, _old_policy(p).read_bytes()[:-100]), "damaged zip archive"),
    "damaged member header": (
        lambda p: _written(p, b"PK\x03\x04" + b"\xff" * 26 + _old_policy(p).read_bytes()[30:]),
        "is damaged: torch.load fails (RuntimeError: PytorchStreamReader failed reading file",
    ),
    "zip bomb": (_zip_bomb, "unpacks to 1,073,741,824 bytes; a policy unpacks to at most 256.0 MiB (refused unread)"),
    "refused pickle": (
        lambda p: torch.save({"x": _Shell()}, p) or p,
        "torch.load(weights_only=True) refuses its pickle (Trying to load unsupported GLOBAL posix.system",
    ),
    "NaN weights": (
        lambda p: _old_policy(p, state_dict={**_old_state(), "torso.0.bias": torch.full((16,), float("nan"))}),
        "tensor 'torso.0.bias' holds non-finite weights (NaN or infinity)",
    ),
    "character device": (lambda p: Path("/dev/zero"), "torch.save file /dev/zero is a character device"),
    "FIFO": (lambda p: os.mkfifo(p) or p, "is a FIFO (named pipe), not a regular file"),
}


def _old_state():
    torch.manual_seed(0)
    return build_policy(check_policy_config(CONFIG)).state_dict()


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_file_that_cannot_be_converted_is_one_line_and_nothing_written(tmp_path, name):
    """Each refused at once (the FIFO without waiting for a writer, the zip bomb unread), in one line naming the
    file, with exit status 1 and no output file."""
    make, message = REFUSED[name]
    old, new = make(tmp_path / "old.pt"), tmp_path / "new.safetensors"
    done = _convert(old, new)
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and str(old) in done.stderr
    assert not new.exists()


def test_the_unpacked_bound_holds_the_largest_network():
    """A policy of the largest network a checkpoint allows (its float32 weights) unpacks within the bound."""
    assert 4 * MAX_PARAMETERS < convert_checkpoint.MAX_UNPACKED < 2 * 4 * MAX_PARAMETERS
