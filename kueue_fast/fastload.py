"""Fast YAML reading for big manifests, with PyYAML's meaning and messages.

The loader asks :func:`parse_yaml` first; None means "let PyYAML do it", and
PyYAML then gives the documents or the error (with its line and column), as
it always did. So a missing package, an unusual text or any failure only
costs speed, never a different result or message.

Which parser: measured side by side in one run (tests of exact equality on
every YAML file under tests/scenarios and tests/bad_inputs, plus a 41 MB
stream of 100k Workloads from ``kueue_fast.bench.drain_objects``; best of 2
on the 2-core development machine, other jobs running):

=================  =======  ======================  =========================  ====================
parser             100k     same documents          wheels cp3.10-3.13         license
                   YAML     as PyYAML               Linux x86_64/aarch64, mac
=================  =======  ======================  =========================  ====================
PyYAML CSafeLoader 16.5 s   (reference)             yes                        MIT
yaml-rs 0.1.6       3.5 s   yes (+)                 yes                        Unlicense
fastyaml-rs 0.7.0   3.6 s   fails on it (*)         yes (abi3)                 MIT OR Apache-2.0
pyyaml-rs 0.1.0     5.0 s   yes                     no (no macOS x86_64,       MIT
                                                    aarch64 only for 3.11)
ryaml 0.5.1         5.4 s   yes                     yes                        MIT
rapidyaml 0.15.2    5.7 s   yes                     yes                        MIT
 (+ orjson)                                                                    (orjson: Apache/MIT)
=================  =======  ======================  =========================  ====================

(+) yaml-rs returns a list both for a stream of documents and for one
document that is a list (``tests/bad_inputs/list-document.yaml``); we append
a sentinel document so that the result is always the stream.
(*) "YAML resource limit exceeded": at most 100,000 documents by default and
a hard 100 MB cap on the input.
rapidyaml also writes its own parse errors to the process's standard error,
which would break the one-line error contract of ``kueue-fast schedule``.

Measured again for issue 13 (same 100k long-drain input, 36 MB of YAML and a
35 MB compact JSON List; best of 2, one process, cyclic GC off, 2-core
machine with other jobs running):

=========================================  ========  =====================================
parser                                     100k      notes
=========================================  ========  =====================================
YAML: yaml-rs 0.1.6 (today)                1.36 s
YAML: rapidyaml 0.15.2 tree, emit_json,    2.00 s    and its stderr output (above)
      orjson.loads
YAML: msgspec.yaml 0.22 (PyYAML's C        15.0 s    (10k x10) it is PyYAML underneath,
      loader)                                        and one document per call only
JSON: json (stdlib)                        0.61 s
JSON: orjson 3.13 loads (today)            0.44 s
JSON: msgspec 0.22 json.decode, to dicts   0.36 s
JSON: msgspec 0.22 json.decode, typed      0.30 s    Workload/ResourceFlavor/... Structs,
      Structs (tagged by kind)                       tagged union on ``kind``
=========================================  ========  =====================================

Kept: yaml-rs and orjson. msgspec saves 0.08 s (dicts) to 0.14 s (typed) of a
3.9 s run whose parse stage is 1.7 s: the rest of that stage is validation and
model building, which typed Structs would not remove (every later stage reads
the objects as dicts: Workload.raw, ClusterState.documents, the YAML output)
and whose messages are the loader's, not msgspec's; nor is msgspec's reading
of the edge cases _json_loads relies on (integers beyond 64 bits, NaN) the
same as orjson's. Not worth a new dependency and a second validation path.

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

import importlib
from typing import Any

from ._kernels import yaml_1_1_risk


def _optional(name: str) -> Any:
    """An optional dependency: the module, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - depends on the environment
        return None


yaml_rs = _optional("yaml_rs")
orjson = _optional("orjson")

__all__ = ["available", "exact_key", "parse_yaml"]

_SENTINEL = "\n---\n0\n"


def available() -> bool:
    """Whether the fast YAML parser is installed."""
    return yaml_rs is not None


def parse_yaml(text: str) -> list[Any] | None:
    """The documents of a YAML stream (as PyYAML gives them, empty ones as
    None), or None to let PyYAML do it."""
    if yaml_rs is None or not text.endswith("\n") or yaml_1_1_risk(text) >= 0:
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


_KEY_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
    if orjson is not None
    else 0
)


def exact_key(value: object) -> bytes | None:
    """A hashable key for a JSON-like value, for caches of results that depend
    only on the value; None when orjson is missing or the value is not plain
    JSON data (then: no caching).

    Equal keys mean equal JSON types and values, with one exception that the
    caller must rule out by comparing the values with == on a hit: orjson
    writes NaN and infinities as null. orjson tells 1, 1.0 and true apart,
    refuses keys that are not strings, integers beyond 64 bits, and (with
    these options) datetimes, dataclasses and subclasses of str, int, dict
    and list."""
    if orjson is None:
        return None
    try:
        key: bytes = orjson.dumps(value, option=_KEY_OPTIONS)
    except Exception:  # noqa: BLE001 - not JSON-like: no key
        return None
    return key
