"""Input -> documents: files, directories (as ``kubectl apply -f``) and
standard input (:func:`read_documents`, :func:`manifest_files`), YAML or JSON,
``List`` kinds split into their items; each object a :class:`Document` that
knows where it came from.

YAML is read (:func:`parse_yaml`) by our YAML reader
(``kueue_fast.loader._yaml_block``, loader/_yaml_block.pyx: the block and flow
collections, comments and one-line scalars that kubectl, ``yaml.safe_dump``,
generators and people write, to exactly PyYAML's values, or None for the
whole text),
else by yaml-rs when it is installed and the text means the same in YAML 1.1
(:func:`parse_yaml_rs`); None from both means "let PyYAML do it", and PyYAML
then gives the documents or the error (with its line and column), as it
always did. So a missing package, an unusual text or any failure only costs
speed, never a different result or message. JSON is read by orjson when it
can (:func:`_json_loads`), else by json.

Every path keeps the limits of :mod:`.limits` (size, nesting, aliases, keys
given twice), and PyYAML's grammar is the one grammar: the block reader
declines a key given twice and nesting beyond the limit; yaml-rs gets only
texts libyaml's parser accepts (:func:`_libyaml_parses`), without aliases
(yaml_1_1_risk), and declines beyond the nesting limit; PyYAML's path
(:func:`.pyyaml_reader.pyyaml_documents`) counts aliases and nesting on the composed nodes
before anything is built and refuses keys given twice while building; JSON
texts are checked after parsing (:func:`_json_limits`). Files are read by
:func:`_read_text` (streams a chunk at a time, within the size limit).
tests/test_yaml_readers_agree.py holds the readers to each other.

Why these parsers, with the measurements behind the choice:
docs/architecture/decisions.md (Reading manifests).

yaml-rs implements YAML 1.2 where PyYAML implements YAML 1.1, so a few plain
scalars mean different things (``yes``/``on``/``off`` booleans, ``010`` octal,
``1:30`` sexagesimal, ``1e3`` is a string for PyYAML and a float for YAML 1.2,
tags, complex keys, a byte order mark, ``...`` before a bare document).
``yaml_1_1_risk`` (loader/_yaml_risk.pyx; a regular expression took 6.7 s on the
41 MB stream, the scan takes well under 0.1 s) finds any such token,
conservatively (one inside a quoted string is a false alarm: PyYAML reads that
text); then PyYAML reads the text. tests/test_fast_loading.py checks the rule on a table of
scalars and on random ones (Hypothesis).
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .. import _compiled
from .._gc import no_cyclic_gc
from ..api.errors import InputError, InputWarning, ParseError, raise_all
from . import limits
from .fastjson import optional_module, orjson
from .pyyaml_reader import pyyaml_documents

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class Document:
    """One object of the input: where it came from, and the object itself."""

    source: str  # file name, "<stdin>" for "-"
    index: int  # 0-based document number in the file
    obj: dict[str, Any]
    item: int | None = None  # position inside a List document

    @property
    def where(self) -> str:
        """``FILE (document N)``, or ``FILE (document N, item M)`` inside a List: for messages."""
        s = f"{self.source} (document {self.index + 1}"
        if self.item is not None:
            s += f", item {self.item}"
        return s + ")"


@functools.cache
def _yaml_rs() -> Any:
    return optional_module("yaml_rs")


_SENTINEL = "\n---\n0\n"
# Built from these sources, else None (_compiled): then PyYAML and json read everything.
_yaml_risk = _compiled.module("loader._yaml_risk")  # yaml_1_1_risk
_json_items = _compiled.module("loader._json_items")  # json_list_items, json_suspect, digit_run
_yaml_block = _compiled.module("loader._yaml_block")
_objects = _compiled.module("loader._objects")  # SharedTemplates, SlotsMaker
# Document(source, index, obj, item) with its slots filled directly (_objects.SlotsMaker):
# a frozen dataclass's __init__ assigns each field through object.__setattr__.
_new_document: Callable[[str, int, dict[str, Any], int | None], Document] = (
    _objects.SlotsMaker(Document) if _objects is not None else Document
)


def available() -> bool:
    """Whether the fast YAML parser is installed."""
    return _yaml_rs() is not None


def _sharing() -> Callable[[Any], None] | None:
    """What shares equal Workload pod templates between the documents of one
    text as they are read (_objects.SharedTemplates), if it is built."""
    return _objects.SharedTemplates() if _objects is not None else None


def parse_yaml(text: str, each: Callable[[Any], None] | None = None) -> list[Any] | None:
    """The documents of a YAML stream (as PyYAML gives them, empty ones as
    None), or None to let PyYAML do it: our block reader first (which passes
    each document to ``each`` as soon as it is read), then yaml-rs."""
    # Three readers, each serving valid texts: the block reader (compiled, no
    # Python twin) the common styles; yaml-rs what it declines but YAML 1.2
    # reads alike (block and multi-line scalars, as kubectl's last-applied
    # annotation); PyYAML (pyyaml_reader) what only YAML 1.1 reads right
    # (anchors, aliases, tags, merge keys, yes/010/1:30) and every error.
    docs = _yaml_block.load_all(text, each) if _yaml_block is not None else None
    return docs if docs is not None else parse_yaml_rs(text)


def parse_yaml_rs(text: str) -> list[Any] | None:
    """The documents of a YAML stream by yaml-rs, or None to let PyYAML do it."""
    yaml_rs = _yaml_rs()
    if (
        yaml_rs is None
        or _yaml_risk is None
        or not text.endswith("\n")
        or _yaml_risk.yaml_1_1_risk(text) >= 0
    ):
        # without a final newline the sentinel would add one to a block scalar
        return None
    if not _libyaml_parses(text):
        return None
    try:
        # The sentinel document makes the result the list of documents even
        # when the stream holds a single document that is a list.
        docs: Any = yaml_rs.loads(text + _SENTINEL, parse_datetime=False)
    except Exception:  # noqa: BLE001 - any failure: PyYAML decides, with its messages
        return None
    if not isinstance(docs, list) or not docs or docs[-1] != 0 or type(docs[-1]) is not int:
        return None
    docs.pop()
    if any(limits.nesting_exceeds(d) for d in docs):
        return None
    return docs


def _libyaml_parses(text: str) -> bool:
    """Whether libyaml's parser (PyYAML's, without building anything: events in
    C) accepts the text: yaml-rs reads some texts libyaml refuses (``{a: |x}``),
    and PyYAML's grammar is the loader's. Also keeps texts nested more than
    libyaml's 1,000 levels from yaml-rs, which can overflow its stack on them."""
    import yaml

    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML without libyaml: its Python parser is no faster than reading
        return False
    try:
        CParser(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


def _json_loads(text: str, each: Callable[[Any], None] | None = None) -> Any:
    """JSON text -> value, within the loader's limits (limits.TextProblem:
    nesting, a key twice). orjson (measured on a 132 MB ``kubectl get -o
    json`` List of 100k Workloads: 0.3 s where json takes 1.2 s) reads it when
    it can; anything it refuses (NaN, lone surrogates, invalid text) goes to
    json, which gives today's value or today's message. So does a text with a
    run of 19 digits: orjson would read an integer beyond 64 bits as a float.

    An object with an "items" array (a List) is read item by item
    (_json_items.json_list_items), each item passed to ``each`` before the next
    is read: the same value, but the copies ``each`` drops die young (the
    100k long-drain List: 451 MB peak RSS after reading -> 159 MB); the same
    walk of the text looks for what the limits refuse and for long numbers.
    Any other text is looked at after it is read (:func:`_json_limits`)."""
    if orjson is not None and _json_items is not None:
        by_item = _json_items.json_list_items(text, orjson.loads, each, limits.MAX_NESTING_DEPTH)
        if by_item is not None:
            return by_item
    if orjson is not None and _json_items is not None and _json_items.digit_run(text, 19) < 0:
        try:
            value = orjson.loads(text)
        except Exception:  # noqa: BLE001 - json decides, with its own messages
            pass
        else:
            _json_limits(text)
            return value
    try:
        value = json.loads(text)
    except RecursionError:  # nested far too deep: json_problem finds where
        _json_limits(text)
        raise limits.too_deep() from None
    _json_limits(text)
    return value


def _json_limits(text: str) -> None:
    """Raise limits.TextProblem for nesting too deep or a key given twice in a
    JSON text (limits.json_problem, after the compiled filter when it is built)."""
    if _json_items is not None and not _json_items.json_suspect(text, limits.MAX_NESTING_DEPTH):
        return
    problem = limits.json_problem(text)
    if problem is not None:
        raise problem


def _split_list(source: str, index: int, d: dict[str, Any]) -> list[Document]:
    """``kind: List`` and ``FooList`` (kubectl get -o yaml|json) -> items.
    Items of a typed list may omit apiVersion/kind; they inherit them."""
    kind = d.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in d):
        return [_new_document(source, index, d, None)]
    items = d.get("items")
    if items is None:
        return []
    where = f"{source} (document {index + 1})"
    if not isinstance(items, list):
        raise ParseError(kind, "items", "Invalid value: must be of type array", source=where)
    elem_kind = kind[: -len("List")] if kind != "List" else None
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            from ..api.validation import type_name

            raise ParseError(
                kind, f"items[{i}]", f"Invalid value: {type_name(it)}: must be of type object", source=where
            )
        if elem_kind is not None:
            it.setdefault("kind", elem_kind)
            if "apiVersion" in d:
                it.setdefault("apiVersion", d["apiVersion"])
        out.append(_new_document(source, index, it, i))
    return out


def _parse_text(text: str, source: str) -> list[Document]:
    docs: list[Document] = []
    stripped = text.lstrip()
    share = _sharing()
    if stripped[:1] in ("{", "["):
        try:
            data = _json_loads(text, share)
        except (json.JSONDecodeError, limits.TextProblem) as e:
            raise ParseError("", "", f"invalid JSON: {e}", source=source) from None
        raw_docs = data if isinstance(data, list) else [data]
    else:
        fast = parse_yaml(text, share)  # None: PyYAML reads it, with its messages
        raw_docs = fast if fast is not None else pyyaml_documents(text, source)
    for i, d in enumerate(raw_docs):
        if d is None:
            continue
        if not isinstance(d, dict):
            raise ParseError(
                "",
                "",
                f"document {i + 1} is a {_kind_of(d)}, not an object with apiVersion and kind",
                source=source,
            )
        docs.extend(_split_list(source, i, d))
    return docs


def _kind_of(x: object) -> str:
    if isinstance(x, list):
        return "list"
    if isinstance(x, str):
        return "string"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, (int, float)):
        return "number"
    return type(x).__name__


def read_documents(
    paths: Sequence[str],
    stdin: IO[str] | None = None,
    *,
    recursive: bool = False,
    warnings: list[InputWarning] | None = None,
) -> list[Document]:
    """All objects of the given files in order; ``-`` reads standard input, a
    directory its manifests (:func:`manifest_files`). Multi-document YAML,
    JSON (detected by a leading ``{`` or ``[``) and List kinds are accepted;
    empty documents are skipped, a file without objects is a warning
    (appended to ``warnings``). Every file is read; a file that cannot be read
    or parsed is an error, raised once all are read (``errors.raise_all``)."""
    errors: list[InputError] = []
    docs = _read_all(paths, stdin, recursive, errors, warnings if warnings is not None else [])
    raise_all(errors)
    return docs


_MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")


def manifest_files(
    path: str, recursive: bool = False, warnings: list[InputWarning] | None = None
) -> list[str]:
    """The files ``kubectl apply -f PATH`` reads (cli-runtime
    ExpandPathsToFileVisitors): PATH itself unless it is a directory; for a
    directory its .json, .yaml and .yml files in lexical order (filepath.Walk:
    symbolic links to directories are not followed), subdirectories only when
    ``recursive`` (``-R``).

    Appended to ``warnings``: a file of the directory that is not a regular
    file (a FIFO would block, a device never end), which is skipped; with
    ``recursive``, a subdirectory that cannot be listed; without it, each
    subdirectory (but hidden ones) of a directory with manifests, named
    without looking inside (``kueue-fast schedule /`` does not walk the
    filesystem). A directory named that cannot be listed is a ParseError."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    notes = warnings if warnings is not None else []
    out: list[str] = []
    unread: list[str] = []

    def walk(directory: str) -> None:
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as e:
            if directory == path:
                raise ParseError("", "", f"cannot read directory: {e.strerror or e}", source=path) from None
            notes.append(InputWarning("", "", f"directory not read: {e.strerror or e}", directory))
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if recursive:
                    walk(entry.path)
                elif not entry.name.startswith("."):
                    unread.append(entry.path)
            elif entry.name.endswith(_MANIFEST_EXTENSIONS):
                if _special_file(entry):
                    notes.append(InputWarning("", "", "not a regular file; skipped", entry.path))
                else:
                    out.append(entry.path)

    walk(path)
    if out:
        notes.extend(
            InputWarning("", "", "subdirectory not read (-R reads subdirectories)", d) for d in unread
        )
    return out


def _special_file(entry: os.DirEntry[str]) -> bool:
    """A FIFO, socket or device (what a symbolic link names). A file that
    cannot be looked at is not: reading it reports why."""
    try:
        mode = entry.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _read_all(
    paths: Sequence[str],
    stdin: IO[str] | None,
    recursive: bool,
    errors: list[InputError],
    warnings: list[InputWarning],
) -> list[Document]:
    docs: list[Document] = []
    try:
        limit = limits.max_input_bytes()
    except ValueError as e:
        errors.append(ParseError("", "", str(e)))
        return docs
    for path in paths:
        try:
            files = manifest_files(path, recursive, warnings)
        except InputError as e:
            errors.append(e)
            continue
        if not files:
            what = "files" if recursive else "files (-R reads its subdirectories)"
            warnings.append(InputWarning("", "", f"directory has no .json, .yaml or .yml {what}", path))
        for file in files:
            try:
                found = _read_file(file, stdin, limit)
            except InputError as e:
                errors.append(e)
                continue
            if not found:
                warnings.append(InputWarning("", "", "no objects in this file", _source_name(file)))
            docs.extend(found)
    return docs


def _source_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def read_text(path: str, stdin: IO[str] | None = None) -> str:
    """The text of one input file (or standard input for ``-``) as the loader
    reads manifests: UTF-8, at most limits.max_input_bytes(), a stream read a
    chunk at a time (:func:`_read_text`). For other inputs (traces). ParseError."""
    try:
        limit = limits.max_input_bytes()
    except ValueError as e:
        raise ParseError("", "", str(e)) from None
    return _read_text(path, stdin, _source_name(path), *limit)


def _read_file(path: str, stdin: IO[str] | None, limit: tuple[int, str]) -> list[Document]:
    source = _source_name(path)
    text = _read_text(path, stdin, source, *limit)
    with no_cyclic_gc():
        return _parse_text(text, source)


_CHUNK = 1 << 20  # what a stream is read by


def _read_text(path: str, stdin: IO[str] | None, source: str, limit: int, limit_text: str) -> str:
    """The text of a file or of standard input (``-``), UTF-8, line breaks as
    Python's text files give them (``\\r\\n`` and ``\\r`` read as ``\\n``), at
    most ``limit`` bytes (limits.max_input_bytes). A regular file larger than
    that is refused before it is read; a stream (standard input, a FIFO, a
    device) is read a chunk at a time, and refused as soon as it passes the
    limit or holds a NUL or text that is not UTF-8 (``/dev/zero``: the first
    chunk)."""
    what = "input" if path == "-" else "file"
    try:
        if path == "-":
            stream: Any = stdin if stdin is not None else sys.stdin
            binary = getattr(stream, "buffer", None)
            if binary is None:  # a text stream given to the API (io.StringIO): characters counted
                return _read_stream(stream, limit, limit_text, source, what, decoder=None)
            data = _read_stream(binary, limit, limit_text, source, what, decoder=_utf8_decoder())
        else:
            with open(path, "rb", buffering=0) as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    data = _read_stream(f, limit, limit_text, source, what, decoder=_utf8_decoder())
                elif st.st_size > limit:
                    raise ParseError("", "", f"{what} {limits.too_large(limit_text)}", source=source)
                else:
                    raw = f.read()
                    if len(raw) > limit:  # it grew
                        raise ParseError("", "", f"{what} {limits.too_large(limit_text)}", source=source)
                    data = raw.decode("utf-8")
                    if "\x00" in data:
                        raise ParseError("", "", _BINARY, source=source)
    except UnicodeDecodeError:
        raise ParseError("", "", f"{what} is not UTF-8 text", source=source) from None
    except OSError as e:
        raise ParseError("", "", f"cannot read: {e.strerror or e}", source=source) from None
    return data.replace("\r\n", "\n").replace("\r", "\n") if "\r" in data else data


_BINARY = "file is binary, not YAML or JSON"


def _utf8_decoder() -> Any:
    import codecs

    return codecs.getincrementaldecoder("utf-8")()


def _read_stream(stream: Any, limit: int, limit_text: str, source: str, what: str, decoder: Any) -> str:
    """A stream's text, read a chunk at a time (bytes through ``decoder``, or
    text when it is None)."""
    parts: list[str] = []
    size = 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise ParseError("", "", f"{what} {limits.too_large(limit_text)}", source=source)
        text = decoder.decode(chunk) if decoder is not None else chunk
        if "\x00" in text:
            raise ParseError("", "", _BINARY, source=source)
        parts.append(text)
    if decoder is not None:
        parts.append(decoder.decode(b"", final=True))
    return "".join(parts)
