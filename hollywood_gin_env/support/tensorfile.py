"""Tensor files: named numpy arrays and a JSON object of metadata in one safetensors file; the one reader and writer.

The format is safetensors (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N, N
bytes of JSON header (each tensor's dtype, shape and byte range; `__metadata__`, a map of strings), then the
tensors' bytes. Reading it runs no code. The metadata object is stored as JSON text under one key of `__metadata__`
(METADATA_KEY), as safetensors' metadata holds strings only.

A file from anyone is read within bounds fixed before anything is parsed or allocated: a regular file of at most
`limit` bytes (support/userfiles.py), a header of at most MAX_HEADER_BYTES with metadata of at most
MAX_METADATA_BYTES, JSON nested at most MAX_JSON_DEPTH deep, every tensor's byte range inside the file, the ranges
tiling the data exactly, each range's length what its dtype and shape need. `read_tensors` then loads only the
tensors a caller expects, each checked against the dtype and shape expected before it is read, so a file costs at
most what its caller allows. Every refusal is one `TensorFileError` (a ValueError) whose one-line message names the
file and the problem.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Collection, Mapping
from typing import Any, BinaryIO

import numpy as np
import safetensors
import safetensors.numpy

from hollywood_gin_env.support.atomic import atomic_write
from hollywood_gin_env.support.userfiles import UserFileError, format_bytes, open_user_file, shown

METADATA_KEY = "hollywood_gin"
MAX_FILE_BYTES = 1 << 30  # the default `limit`: no policy or training state this project writes comes near it
MAX_HEADER_BYTES = 8 << 20
MAX_METADATA_BYTES = 1 << 20  # the metadata's JSON text: parsed into Python objects, so kept well below the header's
MAX_JSON_DEPTH = 32  # the metadata's nesting; a header itself nests 3 deep ({name: {"shape": [...]}})
MAX_DIMS = 8
#: safetensors' dtype names -> numpy's, for the dtypes numpy holds (not BF16 or the F8 kinds)
DTYPES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "F16": "float16",
    "U32": "uint32",
    "I32": "int32",
    "F32": "float32",
    "U64": "uint64",
    "I64": "int64",
    "F64": "float64",
}
#: JSON strings, whose brackets do not nest (the pattern runs in linear time)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_OPENING, _CLOSING = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)
_OTHER_FORMATS = ((b"PK\x03\x04", "a zip archive"), (b"\x80", "a Python pickle"))

Spec = tuple[str, tuple[int, ...]]  # (numpy dtype name, shape)


class TensorFileError(ValueError):
    """A tensor file that cannot be read or written as asked; the one-line message names the file and the problem."""


class NotSafetensorsError(TensorFileError):
    """A file in another format (a zip archive or a pickle: torch.save's formats) where a safetensors file belongs."""


@dataclasses.dataclass(frozen=True)
class TensorHeader:
    """What a tensor file's header declares: its metadata object and each tensor's (numpy dtype name, shape)."""

    metadata: dict[str, Any]
    tensors: dict[str, Spec]


def write_tensor_file(path: str | os.PathLike, tensors: Mapping[str, np.ndarray], metadata: dict[str, Any]) -> None:
    """Write tensors and a JSON-able metadata object to path as a safetensors file, atomically."""
    text = json.dumps(metadata, separators=(",", ":")).encode("utf-8")
    _check_json(text, MAX_JSON_DEPTH, path, "metadata", MAX_METADATA_BYTES)  # never write what the reader refuses
    arrays = {name: np.asarray(array, order="C") for name, array in tensors.items()}  # safetensors copies raw memory
    data = safetensors.numpy.save(arrays, metadata={METADATA_KEY: text.decode("utf-8")})
    if int.from_bytes(data[:8], "little") > MAX_HEADER_BYTES:
        raise TensorFileError(f"{shown(path)}: the header exceeds {format_bytes(MAX_HEADER_BYTES)} (nothing written)")
    atomic_write(path, data)


def read_tensor_header(path: str | os.PathLike, limit: int = MAX_FILE_BYTES, what: str = "tensor file") -> TensorHeader:
    """The header of the tensor file at path (at most `limit` bytes), checked as the module docstring says; reads
    nothing past the header. `what` names the file in messages ("checkpoint file")."""
    try:
        f = open_user_file(path, limit, what)
    except UserFileError as error:
        raise TensorFileError(str(error)) from None
    with f:
        return _read_header(f, path)


def read_tensors(
    path: str | os.PathLike,
    expected: Mapping[str, Spec],
    optional: Collection[str] = (),
    unread_prefix: str | None = None,
    limit: int = MAX_FILE_BYTES,
    what: str = "tensor file",
) -> dict[str, np.ndarray]:
    """The tensors of the file at path, which must be exactly those `expected` declares (name -> (numpy dtype name,
    shape)) but those named in `optional`, which may be absent, and those whose names start with `unread_prefix`,
    which are left unread; each is checked before it is read."""
    found = read_tensor_header(path, limit, what).tensors
    if unread_prefix is not None:
        found = {name: spec for name, spec in found.items() if not name.startswith(unread_prefix)}
    _check_expected(path, found, expected, optional)
    try:
        with safetensors.safe_open(path, framework="np") as reader:
            return {name: _get(reader, name, expected[name], path) for name in found}
    except safetensors.SafetensorError as error:
        raise TensorFileError(f"{shown(path)}: not a readable safetensors file ({error})") from None


def _read_header(f: BinaryIO, path: str | os.PathLike) -> TensorHeader:
    """The header of the opened file f."""
    size = os.fstat(f.fileno()).st_size
    prefix = f.read(9)
    if len(prefix) < 9:
        raise TensorFileError(f"{shown(path)} holds {size} bytes, too few for a safetensors file (a length, a header)")
    if prefix[8:] != b"{":  # a safetensors header is a JSON object after the 8-byte length
        kind = next((kind for magic, kind in _OTHER_FORMATS if prefix.startswith(magic)), None)
        if kind is not None:
            raise NotSafetensorsError(f"{shown(path)} is {kind} (torch.save's format?), not a safetensors file")
        raise TensorFileError(
            f"{shown(path)} holds {size} bytes that do not start as a safetensors file does (8 bytes of length, '{{')"
        )
    length = int.from_bytes(prefix[:8], "little")
    if not 2 <= length <= min(MAX_HEADER_BYTES, size - 8):
        raise TensorFileError(
            f"{shown(path)} declares a header of {length:,} bytes in a file of {size:,}; a header is at most "
            f"{format_bytes(MAX_HEADER_BYTES)} and inside the file"
        )
    raw = _check_json(b"{" + f.read(length - 1), 3, path, "header")
    if not isinstance(raw, dict):
        raise TensorFileError(f"{shown(path)}: the header is not a JSON object")
    metadata = _metadata(raw.pop("__metadata__", {}), path)
    entries = {name: _entry(name, entry, path) for name, entry in raw.items()}
    _check_tiling(path, entries, size - 8 - length)
    tensors = {name: (dtype, shape) for name, (dtype, shape, _) in entries.items()}
    return TensorHeader(metadata, tensors)


def _check_json(text: bytes, depth: int, path: str | os.PathLike, what: str, limit: int = MAX_HEADER_BYTES) -> Any:
    """The JSON value of text, refused before parsing if it is longer than `limit` bytes or its brackets nest deeper
    than `depth`."""
    if len(text) > limit:
        raise TensorFileError(
            f"{shown(path)}: the {what} is {len(text):,} bytes; at most {format_bytes(limit)} is read"
        )
    brackets = np.frombuffer(_JSON_STRING.sub(b"", text), dtype=np.uint8)
    steps = np.isin(brackets, _OPENING).astype(np.int32) - np.isin(brackets, _CLOSING)
    nesting = int(np.cumsum(steps).max(initial=0))
    if nesting > depth:
        raise TensorFileError(f"{shown(path)}: the {what} nests {nesting} deep; at most {depth} is read")
    try:
        return json.loads(text)
    except ValueError as error:  # a UnicodeDecodeError or a JSONDecodeError
        raise TensorFileError(f"{shown(path)}: the {what} is not valid JSON ({error})") from None


def _metadata(strings: object, path: str | os.PathLike) -> dict[str, Any]:
    """The metadata object stored under METADATA_KEY ({} if there is none)."""
    if not isinstance(strings, dict) or not all(isinstance(v, str) for v in strings.values()):
        raise TensorFileError(f"{shown(path)}: the header's __metadata__ is not a map of strings")
    if METADATA_KEY not in strings:
        return {}
    metadata = _check_json(strings[METADATA_KEY].encode("utf-8"), MAX_JSON_DEPTH, path, "metadata", MAX_METADATA_BYTES)
    if not isinstance(metadata, dict):
        raise TensorFileError(f"{shown(path)}: the metadata is a JSON {type(metadata).__name__}, not an object")
    return metadata


def _entry(name: str, entry: object, path: str | os.PathLike) -> tuple[str, tuple[int, ...], tuple[int, int]]:
    """(numpy dtype name, shape, byte range) of one tensor's header entry, each checked."""
    where = f"{shown(path)}: tensor {name!r}"
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise TensorFileError(f"{where}: an entry holds exactly dtype, shape and data_offsets")
    dtype = DTYPES.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None
    if dtype is None:
        raise TensorFileError(f"{where}: dtype {entry['dtype']!r} is not one of {', '.join(DTYPES)}")
    shape, offsets = entry["shape"], entry["data_offsets"]
    if not _ints(shape) or len(shape) > MAX_DIMS:
        raise TensorFileError(f"{where}: shape {shape!r} is not a list of at most {MAX_DIMS} counts")
    if not _ints(offsets) or len(offsets) != 2 or offsets[0] > offsets[1]:
        raise TensorFileError(f"{where}: data_offsets {offsets!r} is not a [begin, end] pair")
    needed = math.prod(shape) * np.dtype(dtype).itemsize
    if offsets[1] - offsets[0] != needed:
        raise TensorFileError(
            f"{where}: {dtype} {tuple(shape)} needs {needed:,} bytes, its data_offsets hold {offsets[1] - offsets[0]:,}"
        )
    return dtype, tuple(shape), (offsets[0], offsets[1])


def _ints(values: object) -> bool:
    """True for a list of non-negative ints (not bools)."""
    return isinstance(values, list) and all(type(v) is int and v >= 0 for v in values)


def _check_tiling(path: str | os.PathLike, entries: dict[str, tuple], data_bytes: int) -> None:
    """TensorFileError unless the tensors' byte ranges follow one another from 0 to the end of the file."""
    end = 0
    for name, (_, _, (begin, stop)) in sorted(entries.items(), key=lambda item: item[1][2]):
        if begin != end:
            raise TensorFileError(f"{shown(path)}: tensor {name!r} starts at byte {begin:,} of the data, not {end:,}")
        end = stop
    if end != data_bytes:
        raise TensorFileError(
            f"{shown(path)}: the tensors declare {end:,} bytes of data; the file holds {data_bytes:,} after its header"
        )


def _check_expected(
    path: str | os.PathLike, found: Mapping[str, Spec], expected: Mapping[str, Spec], optional: Collection[str]
) -> None:
    """TensorFileError naming the first difference between the tensors found and those expected."""
    missing = sorted(set(expected) - set(found) - set(optional))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        problem = f"missing {_names(missing)}" if missing else f"unexpected {_names(extra)}"
        raise TensorFileError(f"{shown(path)}: tensors {problem}; expected {_names(sorted(expected))}")
    for name, spec in expected.items():  # in the caller's order: a network's first layer first
        if name in found and found[name] != tuple(spec):
            raise TensorFileError(f"{shown(path)}: tensor {name!r} is {_spec(found[name])}; expected {_spec(spec)}")


def _get(reader: Any, name: str, spec: Spec, path: str | os.PathLike) -> np.ndarray:
    """One tensor from safetensors' reader, its dtype and shape checked against `spec` before it is read."""
    part = reader.get_slice(name)
    found = (DTYPES.get(part.get_dtype()), tuple(part.get_shape()))
    if found != tuple(spec):  # the file changed since its header was checked
        raise TensorFileError(f"{shown(path)}: tensor {name!r} is {_spec(found)}; expected {_spec(spec)}")
    return reader.get_tensor(name)


def _spec(spec: Spec) -> str:
    return f"{spec[0]} {tuple(spec[1])}"


def _names(names: list[str], shown_at_most: int = 6) -> str:
    more = f" and {len(names) - shown_at_most:,} more" if len(names) > shown_at_most else ""
    return ", ".join(map(repr, names[:shown_at_most])) + more
