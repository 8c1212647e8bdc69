"""Input -> documents: files, directories (as ``kubectl apply -f``) and
standard input (:func:`read_documents`, :func:`manifest_files`), YAML or JSON,
``List`` kinds split into their items; each object a :class:`Document` that
knows where it came from.

YAML is read (:func:`parse_yaml`) by our block-YAML reader
(``kueue_fast._yaml_block``, bindings/_yaml_block.pyx: the block mappings,
block sequences and one-line scalars that kubectl, ``yaml.safe_dump`` and
generators write, to exactly PyYAML's values, or None for the whole text),
else by yaml-rs when it is installed and the text means the same in YAML 1.1
(:func:`parse_yaml_rs`); None from both means "let PyYAML do it", and PyYAML
then gives the documents or the error (with its line and column), as it
always did. So a missing package, an unusual text or any failure only costs
speed, never a different result or message. JSON is read by orjson when it
can (:func:`_json_loads`), else by json.

Why these parsers, with the measurements behind the choice:
docs/architecture/decisions.md (Reading manifests).

yaml-rs implements YAML 1.2 where PyYAML implements YAML 1.1, so a few plain
scalars mean different things (``yes``/``on``/``off`` booleans, ``010`` octal,
``1:30`` sexagesimal, ``1e3`` is a string for PyYAML and a float for YAML 1.2,
tags, complex keys, a byte order mark, ``...`` before a bare document).
``_kernels.yaml_1_1_risk`` (Cython: a regular expression took 6.7 s on the
41 MB stream, the scan takes well under 0.1 s) finds any such token,
conservatively (one inside a quoted string is a false alarm: PyYAML reads that
text); then PyYAML reads the text. tests/test_fast_loading.py checks the rule on a table of
scalars and on random ones (Hypothesis).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .. import _compiled
from .._gc import no_cyclic_gc
from ..errors import InputError, InputWarning, ParseError, raise_all
from ..fastjson import optional_module, orjson

if TYPE_CHECKING:
    import yaml


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
def _yaml_loader() -> type:
    """PyYAML's loader as the loader reads YAML. PyYAML and yaml-rs are imported
    only when a text needs them (about 30 ms of a command's start)."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    # Timestamps stay strings: YAML's datetime drops nanoseconds, and the API
    # server sees strings anyway.
    class Loader(base):  # type: ignore[misc,unused-ignore]
        pass

    resolvers_by_char: dict[str, list[tuple[str, Any]]] = base.yaml_implicit_resolvers
    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for k, resolvers in resolvers_by_char.items()
    }
    return Loader


def __getattr__(name: str) -> Any:
    if name == "_LOADER":  # the tests read PyYAML's documents with it
        return _yaml_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _yaml_rs() -> Any:
    return optional_module("yaml_rs")


_SENTINEL = "\n---\n0\n"
# Built from these sources, else None (_compiled): then PyYAML and json read everything.
_kernels = _compiled.module("_kernels")  # yaml_1_1_risk, digit_run, json_list_items
_yaml_block = _compiled.module("_yaml_block")
_bulk = _compiled.module("_bulk")  # SharedTemplates, SlotsMaker
# Document(source, index, obj, item) with its slots filled directly (_bulk.SlotsMaker):
# a frozen dataclass's __init__ assigns each field through object.__setattr__.
_new_document: Callable[[str, int, dict[str, Any], int | None], Document] = (
    _bulk.SlotsMaker(Document) if _bulk is not None else Document
)


def available() -> bool:
    """Whether the fast YAML parser is installed."""
    return _yaml_rs() is not None


def _sharing() -> Callable[[Any], None] | None:
    """What shares equal Workload pod templates between the documents of one
    text as they are read (_bulk.SharedTemplates), if it is built."""
    return _bulk.SharedTemplates() if _bulk is not None else None


def parse_yaml(text: str, each: Callable[[Any], None] | None = None) -> list[Any] | None:
    """The documents of a YAML stream (as PyYAML gives them, empty ones as
    None), or None to let PyYAML do it: our block reader first (which passes
    each document to ``each`` as soon as it is read), then yaml-rs."""
    docs = _yaml_block.load_all(text, each) if _yaml_block is not None else None
    return docs if docs is not None else parse_yaml_rs(text)


def parse_yaml_rs(text: str) -> list[Any] | None:
    """The documents of a YAML stream by yaml-rs, or None to let PyYAML do it."""
    yaml_rs = _yaml_rs()
    if yaml_rs is None or _kernels is None or not text.endswith("\n") or _kernels.yaml_1_1_risk(text) >= 0:
        # without a final newline the sentinel would add one to a block scalar
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
    return docs


def _json_loads(text: str, each: Callable[[Any], None] | None = None) -> Any:
    """JSON text -> value. orjson (measured on a 132 MB ``kubectl get -o json``
    List of 100k Workloads: 0.3 s where json takes 1.2 s) reads it when it
    can; anything it refuses (NaN, lone surrogates, invalid text) goes to
    json, which gives today's value or today's message. So does a text with a
    run of 19 digits: orjson would read an integer beyond 64 bits as a float.

    An object with an "items" array (a List) is read item by item
    (_kernels.json_list_items), each item passed to ``each`` before the next
    is read: the same value, but the copies ``each`` drops die young (the
    100k long-drain List: 451 MB peak RSS after reading -> 159 MB)."""
    if orjson is not None and _kernels is not None and _kernels.digit_run(text, 19) < 0:
        by_item = _kernels.json_list_items(text, orjson.loads, each)
        if by_item is not None:
            return by_item
        try:
            return orjson.loads(text)
        except Exception:  # noqa: BLE001 - json decides, with its own messages
            pass
    return json.loads(text)


_JSONError: tuple[type[Exception], ...] = (json.JSONDecodeError,)


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
            from ..validation import type_name

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
        except _JSONError as e:
            raise ParseError("", "", f"invalid JSON: {e}", source=source) from None
        raw_docs = data if isinstance(data, list) else [data]
    else:
        fast = parse_yaml(text, share)  # None: PyYAML reads it, with its messages
        raw_docs = fast if fast is not None else _pyyaml_documents(text, source)
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


def _pyyaml_documents(text: str, source: str) -> list[Any]:
    import yaml

    try:
        return list(yaml.load_all(text, Loader=_yaml_loader()))
    except yaml.YAMLError as e:
        raise ParseError("", "", f"invalid YAML: {_yaml_problem(e)}", source=source) from None
    except (ValueError, TypeError, RecursionError) as e:  # e.g. a key that is not hashable
        raise ParseError("", "", f"invalid YAML: {e}", source=source) from None


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


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)


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


def manifest_files(path: str, recursive: bool = False) -> list[str]:
    """The files ``kubectl apply -f PATH`` reads (cli-runtime
    ExpandPathsToFileVisitors): PATH itself unless it is a directory; for a
    directory its .json, .yaml and .yml files in lexical order (filepath.Walk:
    symbolic links to directories are not followed), subdirectories only when
    ``recursive`` (``-R``)."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    out: list[str] = []

    def walk(directory: str) -> None:
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if recursive:
                    walk(entry.path)
            elif entry.name.endswith(_MANIFEST_EXTENSIONS):
                out.append(entry.path)

    walk(path)
    return out


def _subdirectories_with_manifests(path: str) -> list[str]:
    """The subdirectories of ``path`` that ``-R`` would read manifests from."""
    subs = sorted(e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False))
    return [sub for sub in subs if manifest_files(sub, recursive=True)]


def _read_all(
    paths: Sequence[str],
    stdin: IO[str] | None,
    recursive: bool,
    errors: list[InputError],
    warnings: list[InputWarning],
) -> list[Document]:
    docs: list[Document] = []
    for path in paths:
        files = manifest_files(path, recursive)
        if not files:
            what = "files" if recursive else "files (-R reads its subdirectories)"
            warnings.append(InputWarning("", "", f"directory has no .json, .yaml or .yml {what}", path))
        elif not recursive and path != "-" and os.path.isdir(path):
            unread = "subdirectory with manifests not read (-R reads subdirectories)"
            warnings.extend(InputWarning("", "", unread, sub) for sub in _subdirectories_with_manifests(path))
        for file in files:
            try:
                found = _read_file(file, stdin)
            except InputError as e:
                errors.append(e)
                continue
            if not found:
                warnings.append(InputWarning("", "", "no objects in this file", _source_name(file)))
            docs.extend(found)
    return docs


def _source_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _read_file(path: str, stdin: IO[str] | None) -> list[Document]:
    source = _source_name(path)
    if path == "-":
        try:
            text = (stdin if stdin is not None else sys.stdin).read()
        except UnicodeDecodeError:
            raise ParseError("", "", "input is not UTF-8 text", source=source) from None
    else:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            raise ParseError("", "", "file is not UTF-8 text", source=source) from None
        except OSError as e:
            raise ParseError("", "", f"cannot read: {e.strerror or e}", source=source) from None
    if "\x00" in text:
        raise ParseError("", "", "file is binary, not YAML or JSON", source=source)
    with no_cyclic_gc():
        return _parse_text(text, source)
