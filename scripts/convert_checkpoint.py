"""Convert a policy saved with torch.save (a `.pt` checkpoint, format version 4) to a `.safetensors` one.

Run: `python scripts/convert_checkpoint.py OLD.pt NEW.safetensors` (`--force` replaces an existing NEW; without it an
existing file is refused). The weights are copied exactly, so the new file plays the same moves: its network is
"cards" with the old config's arguments (hollywood_gin_env/agents/checkpoint.py), and the plain-data keys beside the
config (the training record) go into its metadata. A run's last.pt is converted as the policy it holds: its training
state is not, so a run resumes only from a last file written by this version.

The old file is read within bounds before torch sees it: a regular file (a device such as /dev/zero or a FIFO is
refused without waiting on it: support/userfiles.py), a zip archive (torch.save's format) of at most MAX_MEMBERS
members that unpack to at most MAX_UNPACKED bytes in all, what the largest network a checkpoint allows needs (so a
zip bomb is refused unread; a run's last.pt of such a network, its training state beside it, may exceed it: convert
the run's policy.pt). Then `torch.load(weights_only=True)` reads it, which unpickles tensors and plain data
only (a pickle naming anything else is refused): convert only a file you trust (your own runs' policies). Files from
anyone else should come as `.safetensors`, which load without running or unpickling anything. The weights are
checked as the loader checks them (the network's tensor names and shapes; finite, within ±MAX_WEIGHT) before
anything is written. Every refusal is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import zipfile
from typing import IO, Any

import torch

from hollywood_gin_env.agents.checkpoint import check_weights, save_checkpoint
from hollywood_gin_env.agents.networks import build_network, network_tensors, tensor_specs
from hollywood_gin_env.agents.policy import check_policy_config, config_network
from hollywood_gin_env.support.tensorfile import check_tensor_specs
from hollywood_gin_env.support.userfiles import format_bytes, open_user_file, shown

#: keys of the old format that are not metadata: the weights and the format's own fields
NOT_METADATA = ("format", "version", "config", "state_dict")
OLD_FORMAT, OLD_VERSION = "hollywood-gin-policy", 4
#: The largest network's float32 weights (4 * MAX_PARAMETERS bytes: 191 MiB) and room for its pickle and record.
MAX_UNPACKED = 256 << 20
MAX_MEMBERS = 10_000  # a policy's archive holds one member per tensor and a few more
MAX_DIRECTORY = 4 << 20  # the archive's directory: its members' names and sizes, parsed into Python objects
_END_OF_DIRECTORY = b"PK\x05\x06"
_END_RECORD = 22  # bytes of the end-of-central-directory record, before its comment (at most 65,535 bytes)


def convert(old: str, new: str, force: bool = False) -> list[str]:
    """Write the policy of the torch.save checkpoint `old` to `new`; the keys left out (not plain data: a run's
    training state). ValueError in one line, nothing written, otherwise."""
    if os.path.lexists(new) and not force:
        raise ValueError(f"{shown(new)} exists; pass --force to replace it")
    data = read_old(old)
    if not isinstance(data, dict) or not {"config", "state_dict"} <= set(data):
        raise ValueError(f"{shown(old)} is not a hollywood-gin policy (a dict with 'config' and 'state_dict')")
    if data.get("format", OLD_FORMAT) != OLD_FORMAT or data.get("version") != OLD_VERSION:
        raise ValueError(f"{shown(old)}: this converter reads format {OLD_FORMAT!r} version {OLD_VERSION} only")
    config = check_policy_config(data["config"], where=f"{shown(old)}: config")
    spec, state = config_network(config), data["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise ValueError(f"{shown(old)}: state_dict is not a mapping of tensor names to tensors")
    check_tensor_specs(old, tensor_specs(state), network_tensors(spec, shown(old)))
    check_weights({name: t.detach().cpu().numpy() for name, t in state.items()}, shown(old))  # as the loader will
    network = build_network(spec, shown(old))
    network.load_state_dict(state)  # every tensor checked above: the names and shapes the network has
    metadata = {key: value for key, value in data.items() if key not in NOT_METADATA and _plain(value)}
    save_checkpoint(new, network, spec, deterministic=config["deterministic"], **metadata)
    return sorted(set(data) - set(NOT_METADATA) - set(metadata))


def read_old(path: str) -> Any:
    """What torch.save wrote to path, read within the module docstring's bounds; ValueError in one line otherwise."""
    with open_user_file(path, MAX_UNPACKED, "torch.save file") as file:
        check_archive(file, path)
        file.seek(0)
        try:
            return torch.load(file, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as error:
            reason = next((line for line in str(error).splitlines() if "GLOBAL" in line), "not tensors or plain data")
            raise ValueError(f"{shown(path)}: torch.load(weights_only=True) refuses its pickle ({reason})") from None
        except Exception as error:  # noqa: BLE001 (a damaged archive fails deep in torch, in any of several ways)
            reason = str(error).split(". ")[0][:200]
            raise ValueError(f"{shown(path)} is damaged: torch.load fails ({type(error).__name__}: {reason})") from None


def check_archive(file: IO[bytes], path: str) -> None:
    """ValueError unless the open file is a zip archive whose directory (at most MAX_DIRECTORY bytes, read from the
    archive's last record before it is parsed) lists at most MAX_MEMBERS members unpacking to at most MAX_UNPACKED
    bytes in all."""
    size = os.fstat(file.fileno()).st_size
    if file.read(4) != b"PK\x03\x04":
        raise ValueError(f"{shown(path)} ({size:,} bytes) is not a zip archive, torch.save's format")
    file.seek(max(0, size - _END_RECORD - 0xFFFF))
    tail = file.read()
    at = tail.rfind(_END_OF_DIRECTORY)
    if at < 0 or len(tail) - at < _END_RECORD:
        raise ValueError(f"{shown(path)} is a damaged zip archive (no end of its directory)")
    members = int.from_bytes(tail[at + 10 : at + 12], "little")
    directory = int.from_bytes(tail[at + 12 : at + 16], "little")
    if members > MAX_MEMBERS or directory > MAX_DIRECTORY:  # 0xFFFF..: a zip64 archive, far larger than a policy's
        raise ValueError(
            f"{shown(path)} is a zip archive of {members:,} members in a directory of {directory:,} bytes; a "
            f"policy's has at most {MAX_MEMBERS:,} members and {format_bytes(MAX_DIRECTORY)}"
        )
    try:
        with zipfile.ZipFile(file) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, ValueError, EOFError) as error:
        raise ValueError(f"{shown(path)} is a damaged zip archive ({error})") from None
    if unpacked > MAX_UNPACKED:
        raise ValueError(
            f"{shown(path)} unpacks to {unpacked:,} bytes; a policy unpacks to at most {format_bytes(MAX_UNPACKED)} "
            "(refused unread)"
        )


def _plain(value: object) -> bool:
    """True for JSON data (no tensors)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def main() -> int:
    """Convert one file; 0 on success, 1 with one line on stderr otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the torch.save checkpoint (.pt)")
    parser.add_argument("new", help="the safetensors checkpoint to write (.safetensors)")
    parser.add_argument("--force", action="store_true", help="replace NEW if it exists (default: refuse it)")
    args = parser.parse_args()
    try:
        left_out = convert(args.old, args.new, args.force)
    except (OSError, ValueError) as error:
        print(f"convert_checkpoint: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    print(f"wrote {args.new}" + (f" (left out, not plain data: {', '.join(left_out)})" if left_out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
