"""Tensor files: named numpy arrays and a JSON object of metadata in one safetensors file; the one reader and writer.

The format is safetensors (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N, N
bytes of JSON header (each tensor's dtype, shape and byte range; `__metadata__`, a map of strings), then the
tensors' bytes. Reading it runs no code. The metadata object is stored as JSON text under one key of `__metadata__`
(METADATA_KEY), as safetensors' metadata holds strings only.

A file from anyone is read within bounds fixed before anything is parsed or allocated: a regular file of at most
`limit` bytes (support/userfiles.py), a header of at most MAX_HEADER_BYTES with metadata of at most
MAX_METADATA_BYTES nested at most MAX_JSON_DEPTH deep; then safetensors checks every tensor's bytes lie inside the
file, tile its data exactly and are what its dtype and shape need. `read_tensors` then loads only the
tensors a caller expects, each checked against the dtype and shape expected before it is read, so a file costs at
most what its caller allows. Every refusal is one `TensorFileError` (a ValueError) whose one-line message names the
file and the problem.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any, BinaryIO

import numpy as np
import safetensors
import safetensors.numpy

from hollywood_gin_env.support.atomic import atomic_write
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.userfiles import UserFileError, format_bytes, open_user_file, read_opened, shown

METADATA_KEY = "hollywood_gin"
MAX_FILE_BYTES = 1 << 30  # the default `limit`: no policy or training state this project writes comes near it
MAX_HEADER_BYTES = 8 << 20
MAX_METADATA_BYTES = 1 << 20  # the metadata's JSON text: parsed into Python objects, so kept well below the header's
MAX_JSON_DEPTH = 32  # the metadata's nesting
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
    _check_json(text, path)  # never write what the reader would refuse
    arrays = {name: np.asarray(array, order="C") for name, array in tensors.items()}  # safetensors copies raw memory
    data = safetensors.numpy.save(arrays, metadata={METADATA_KEY: text.decode("utf-8")})
    if int.from_bytes(data[:8], "little") > MAX_HEADER_BYTES:
        raise TensorFileError(f"{shown(path)}: the header exceeds {format_bytes(MAX_HEADER_BYTES)} (nothing written)")
    atomic_write(path, data)


def read_tensor_header(path: str | os.PathLike, limit: int = MAX_FILE_BYTES, what: str = "tensor file") -> TensorHeader:
    """The header of the tensor file at path (at most `limit` bytes), checked as the module docstring says; reads
    nothing past the header. `what` names the file in messages ("checkpoint file")."""
    with _opened(path, limit, what) as (_, header):
        return header


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
    which are left unread; all are checked before any is read."""
    with _opened(path, limit, what) as (reader, header):
        found = {k: spec for k, spec in header.tensors.items() if not unread_prefix or not k.startswith(unread_prefix)}
        check_tensor_specs(path, found, expected, optional)
        return {name: reader.get_tensor(name) for name in found}


@contextlib.contextmanager
def _opened(path: str | os.PathLike, limit: int, what: str) -> Iterator[tuple[Any, TensorHeader]]:
    """(safetensors' reader, the checked header) of the file at path: its start checked here, then its header by
    safetensors (every tensor's dtype, shape and bytes inside the file, the bytes tiling the data)."""
    try:
        file = open_user_file(path, limit, what)
    except UserFileError as error:
        raise TensorFileError(str(error)) from None
    with file:
        _check_start(file, path, what)
    try:
        with safetensors.safe_open(path, framework="np") as reader:
            yield reader, TensorHeader(_metadata(reader.metadata(), path), _specs(reader, path))
    except safetensors.SafetensorError as error:
        problem = str(error).removeprefix("Error while deserializing header: ")
        raise TensorFileError(f"{shown(path)} is damaged or not a safetensors file ({problem})") from None


def _check_start(file: BinaryIO, path: str | os.PathLike, what: str) -> None:
    """TensorFileError unless the opened file starts as a safetensors file does, its header length within bounds."""
    size = os.fstat(file.fileno()).st_size
    try:
        start = read_opened(file, 9, path, what)
    except UserFileError as error:
        raise TensorFileError(str(error)) from None
    if len(start) < 9:
        raise TensorFileError(f"{shown(path)} holds {size} bytes, too few for a safetensors file (a length, a header)")
    if start[8:] != b"{":  # a safetensors header is a JSON object after the 8-byte length
        kind = next((kind for magic, kind in _OTHER_FORMATS if start.startswith(magic)), None)
        if kind is not None:
            raise NotSafetensorsError(f"{shown(path)} is {kind} (torch.save's format?), not a safetensors file")
        raise TensorFileError(f"{shown(path)} does not start as a safetensors file does (8 bytes of length, '{{')")
    length = int.from_bytes(start[:8], "little")
    if length > min(MAX_HEADER_BYTES, size - 8):
        raise TensorFileError(
            f"{shown(path)} declares a header of {length:,} bytes in a file of {size:,}; a header is at most "
            f"{format_bytes(MAX_HEADER_BYTES)} and inside the file"
        )


def _check_json(text: bytes, path: str | os.PathLike) -> Any:
    """The JSON value of metadata text, refused before parsing if it is longer than MAX_METADATA_BYTES or its brackets
    nest deeper than MAX_JSON_DEPTH."""
    if len(text) > MAX_METADATA_BYTES:
        raise TensorFileError(
            f"{shown(path)}: the metadata is {len(text):,} bytes; at most {format_bytes(MAX_METADATA_BYTES)} is read"
        )
    brackets = np.frombuffer(_JSON_STRING.sub(b"", text), dtype=np.uint8)
    steps = np.isin(brackets, _OPENING).astype(np.int32) - np.isin(brackets, _CLOSING)
    nesting = int(np.cumsum(steps).max(initial=0))
    if nesting > MAX_JSON_DEPTH:
        raise TensorFileError(f"{shown(path)}: the metadata nests {nesting} deep; at most {MAX_JSON_DEPTH} is read")
    try:
        return json.loads(text)
    except ValueError as error:  # a UnicodeDecodeError or a JSONDecodeError
        raise TensorFileError(f"{shown(path)}: the metadata is not valid JSON ({error})") from None


def _metadata(strings: dict[str, str] | None, path: str | os.PathLike) -> dict[str, Any]:
    """The metadata object stored under METADATA_KEY ({} if there is none)."""
    if not strings or METADATA_KEY not in strings:
        return {}
    metadata = _check_json(strings[METADATA_KEY].encode("utf-8"), path)
    if not isinstance(metadata, dict):
        raise TensorFileError(f"{shown(path)}: the metadata is a JSON {type(metadata).__name__}, not an object")
    return metadata


def _specs(reader: Any, path: str | os.PathLike) -> dict[str, Spec]:
    """Each tensor's (numpy dtype name, shape), as safetensors read them from the header."""
    specs, names = {}, reader.keys()
    for name in names:
        part = reader.get_slice(name)
        if part.get_dtype() not in DTYPES:
            raise TensorFileError(
                f"{shown(path)}: tensor {shown_value(name)} is {part.get_dtype()}, which numpy does not hold"
            )
        specs[name] = (DTYPES[part.get_dtype()], tuple(part.get_shape()))
    return specs


def check_tensor_specs(
    path: str | os.PathLike, found: Mapping[str, Spec], expected: Mapping[str, Spec], optional: Collection[str] = ()
) -> None:
    """TensorFileError naming the first difference between the tensors found and those expected (name -> (numpy
    dtype name, shape)), but those in `optional`, which may be absent."""
    missing = sorted(set(expected) - set(found) - set(optional))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        problem = f"missing {_names(missing)}" if missing else f"unexpected {_names(extra)}"
        raise TensorFileError(f"{shown(path)}: tensors {problem}; expected {_names(sorted(expected))}")
    for name, spec in expected.items():  # in the caller's order: a network's first layer first
        if name in found and found[name] != tuple(spec):
            raise TensorFileError(
                f"{shown(path)}: tensor {shown_value(name)} is {_spec(found[name])}; expected {_spec(spec)}"
            )


def _spec(spec: Spec) -> str:
    shape = tuple(spec[1])
    return f"{spec[0]} {shown_value(shape)}" + (f" ({len(shape):,} dimensions)" if len(shape) > 6 else "")


def _names(names: list[str], shown_at_most: int = 6) -> str:
    more = f" and {len(names) - shown_at_most:,} more" if len(names) > shown_at_most else ""
    return ", ".join(map(shown_value, names[:shown_at_most])) + more
