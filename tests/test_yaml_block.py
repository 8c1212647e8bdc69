"""The block-YAML reader (``kueue_fast.loader._yaml_block.load_all``, loader/_yaml_block.pyx)
gives exactly what the loader's PyYAML gives (``pyyaml_reader.LOADER``: libyaml,
YAML 1.1 resolvers, timestamps as strings), types included, or None.

* every YAML file under tests/, and its block-style re-dump (accepted unless a
  string holds a line break);
* tables of tricky scalars in every position, of layouts, and of the
  constructs it must decline;
* Hypothesis: JSON-like documents written by yaml.safe_dump with style,
  indent and explicit-start variations, and random texts made of YAML-ish
  lines (indentation, dashes, keys, quotes, comments).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st
from values import typed

from kueue_fast.loader import documents, limits, pyyaml_reader
from kueue_fast.loader._yaml_block import load_all

TESTS = Path(__file__).parent
ALL_YAML = sorted(p for p in TESTS.rglob("*") if p.suffix in (".yaml", ".yml"))


def pyyaml(text: str) -> Any:
    """PyYAML's documents, or the string "error" when it refuses the text."""
    try:
        return list(yaml.load_all(text, Loader=pyyaml_reader.LOADER))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, limits.TextProblem):
        return "error"


def check(text: str) -> list[Any] | None:
    """load_all(text) is None or PyYAML's documents, typed; returns it."""
    got = load_all(text)
    if got is not None:
        want = pyyaml(text)
        assert want != "error", f"accepted what PyYAML refuses: {text!r}"
        assert typed(got) == typed(want), text
    return got


def has_line_break(x: Any) -> bool:
    if isinstance(x, dict):
        return any(has_line_break(k) or has_line_break(v) for k, v in x.items())
    if isinstance(x, list):
        return any(has_line_break(v) for v in x)
    return isinstance(x, str) and any(c in x for c in "\n\r\x85\u2028\u2029")


# --- files -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_YAML, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_test_yaml_file_and_its_block_dump(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: the loader rejects it before parsing")
    want = pyyaml(text)
    if want == "error":
        assert load_all(text) is None
        return
    check(text)
    # as a generator writes it: block style, no line wrapping
    dumped = yaml.safe_dump_all(want, default_flow_style=False, sort_keys=False, width=10**6)
    got = check(dumped)
    if not has_line_break(want):
        assert got is not None, dumped


def test_the_bench_manifests_are_read_with_interned_keys() -> None:
    from kueue_fast.bench import drain_case, drain_objects

    objs = drain_objects(drain_case(n_cq=10, n_cohorts=2, n_workloads=50))
    text = yaml.safe_dump_all(objs, sort_keys=False)
    got = load_all(text)
    assert got is not None and typed(got) == typed(objs)
    kinds = [next(k for k in d if k == "kind") for d in got]
    assert all(k is kinds[0] for k in kinds)  # one str object per distinct key


# --- tables ------------------------------------------------------------------------------

# Plain scalars around every YAML 1.1 implicit resolver (bool, float, int, merge,
# null, value; timestamps stay strings), and look-alikes.
SCALARS = (
    "yes Yes YES no No NO on On ON off Off OFF y Y n N true True TRUE false False FALSE tRUE"
    " null Null NULL nULL ~ ~~ = == << <<< 0 -0 +0 00 010 0755 08 09 0o17 0x1F 0X1F 0x 0x_ 0b101"
    " 0b 0b_ 0b12 1_000 0_8 _1 1_ 1e3 1E3 1e+3 1e-7 1.5e3 1.5e+3 1.5E-3 1.e+3 1. .5 -.5 +.5 ._"
    " 1.0 -1.5 +1.5 0.1 00.5 1.2.3 1__0.5 .inf -.inf +.inf .Inf .INF .nan .NaN -.nan inf nan"
    " 1:30 1:30.5 -1:30 190:20:30 1:60 1:5 1:05 0:30 0:30.5 1:30:_ 1::30 2025-01-06"
    " 2025-01-06T00:00:00Z 500m 1Gi 16Ki 100M 1e 12:ab 9223372036854775807 9223372036854775808"
    " 123456789012345678 1234567890123456789 -1 +1 - -- --- ... .. a:1 a:1e3 on-demand"
    " no-gpu yes-please -x +x ~x a#b a!b a&b a*b"
).split()


@pytest.mark.parametrize("scalar", SCALARS)
def test_plain_scalars_in_every_position(scalar: str) -> None:
    for text in (
        f"k: {scalar}\n",
        f"- {scalar}\n",
        f"{scalar}\n",
        f"{scalar}: v\n",
        f"- {scalar}: v\n  k: {scalar}\n",
        f"k:\n  {scalar}\n",
        f"k: '{scalar}'\n",
        f'k: "{scalar}"\n',
        f"---\nk: {scalar}\n---\n- {scalar}\n",
    ):
        got = check(text)
        if pyyaml(text) == "error":
            assert got is None, text


def test_plain_decimal_numbers_and_words_are_read_not_declined() -> None:
    text = (
        "a: 10\nb: -3\nc: +7\nd: 0\ne: 1.5\nf: -0.0\ng: 1.e+3\nh: 123456789012345678901234567890\n"
        "i: yes\nj: Off\nk: ~\nl: null\nm:\nn: 500m\no: 1e3\np: 2025-01-06\nq: 0o17\nr: '010'\n"
        "1: int key\n2.5: float key\nfalse: bool key\n~: null key\n"  # not true: 1 == True, a key twice
    )
    got = check(text)
    assert got is not None
    assert typed(got[0]["a"]) == ("int", 10) and typed(got[0]["e"]) == ("float", 1.5)
    assert typed(got[0]["h"]) == ("int", 123456789012345678901234567890)
    assert got[0]["i"] is True and got[0]["j"] is False and got[0]["k"] is None
    assert math.copysign(1, got[0]["f"]) == -1
    assert got[0]["o"] == "1e3" and got[0]["q"] == "0o17" and got[0]["r"] == "010"


LAYOUTS = [
    "",
    "# only a comment\n",
    "---\n",
    "---\n---\n",
    "a: 1\n---\n",
    "---\n---\na: 1\n",
    "--- # comment\na: 1\n--- \n- x\n",
    "a: 1",
    "- a\n- b",
    "a: 1\n\n\nb: 2\n",
    "a: 1\n  # a comment further in\nb: 2\n",
    "a:\n- x\n- y\nb: 1\n",
    "a:\n  - x\n  - y\nb: 1\n",
    "a:\n    - x\nb: 1\n",
    "- a: 1\n  b: 2\n- c\n",
    "- a:\n  - x\n- y\n",
    "- a:\n- x\n",
    "- a:\n    b: 1\n  c: 2\n",
    "-   a: 1\n    b: [ ]\n",
    "- - a\n  - b\n- - - c\n",
    "-\n  a: 1\n-\n- x\n",
    "- #c\n- x\n",
    "a:\n -\n",
    "a:\n  foo\nb: 1\n",
    "a:\n\n  b: 1\n\n",
    "  a: 1\n  b:\n    c: 2\n",
    "a : 1\n'b'  : 2\n\"c\": 3\n",
    "a  b: c   d   # comment\n",
    "key:: v\n",
    "a:#b\n",
    "a #b: c\n",
    "a: b#c\n",
    "a: 'it''s'\nb: ''\nc: '#'\n",
    'a: "x\\"y\\\\z\\/\\ \\t\\n\\r\\0\\a\\b\\v\\f\\e\\N\\_\\L\\P"\n',
    'a: "\\x41\\u00e9\\U0001F600 \\x7f"\n',
    "a: {}\nb: []\nc:\n- {}\n- []\n",
    "x: 1\nx: 2\ny: 3\nx: 4\n",
    "1: a\n2.0: b\nnull: c\ntrue: d\n",
    "a: é\nb: \u00a0\nc: 日本\n'ü': \"ö\"\n",
    "a: ...\nb: ---\n- ---\n",
    "...\n",
    "---\n...\n",
    "a: 1\n...\n...\n",
    "a: 1\n... # c\n# c\n---\nb: 1\n...\n",
    "42\n...\n---\n43\n...\n",
    "# c\n...\n",
    "a: 1\n---\n...\n",
    "a: 1\n...x\n",
    "--- a\n",
    "--- 'a' # c\n--- 1\n...\n--- {}\n",
    "--- a\n  b\n",
    "--- a: 1\n",
    "--- - a\n",
    "- ---\n",
    "-1: x\n",
    "a: -1\nb: -x\nc: --\n",
]


@pytest.mark.parametrize("text", LAYOUTS)
def test_layouts(text: str) -> None:
    check(text)


@pytest.mark.parametrize(
    "text",
    [
        # the subset's documents, which must not decline
        "a: 1\n---\n",
        "a:\n- x\nb: 1\n",
        "- a: 1\n  b: 2\n- c\n",
        "- - a\n  - b\n",
        "a : 1\n'b'  : 2\n\"c\": 3\n",
        "a: {}\nb: []\n",
        'a: "\\x41\\u00e9"\n',
        "a: é\n",
        # flow collections as people write them by hand
        "metadata: {name: wl-0, namespace: ns-306, creationTimestamp: '2026-01-01T00:00:00Z'}\n",
        "requests: {cpu: '500m', memory: 1Gi}\n",
        "a: [1, 2, 'x', \"y\", [], {}, [b, {c: d}]]\n",
        "- {name: main, count: 2}\n- [a, b]\n",
        "a: {b: 1,\n  c: [2,\n    3]}  # comment\n",
        "a: {b: 1, # comment\n  c: 2}\n",
        "a: {b: , c: 2}\n",
        "a: {b:\n    1}\n",
        "a: { b: 1 }\n",
        "a: {t: 2026-01-01T00:00:00Z}\n",
        "a: {x y: 1, 'k': 2, \"q\": yes}\n",
        "{a: 1}\n",
        "[a, b]\n",
        "--- {a: 1}\n--- [1]\n",
        "a: { }\n",
        "a: [ ]\n",
    ],
)
def test_the_subset_is_read(text: str) -> None:
    assert check(text) is not None


DECLINED = {
    "anchor": "a: &x 1\nb: 2\n",
    "alias": "a: 1\nb: *x\n",
    "tag": "a: !!str 1\n",
    "local tag": "a: !foo x\n",
    "literal block scalar": "a: |\n  x\n",
    "folded block scalar": "a: >\n  x\n",
    "plain over two lines": "a: b\n  c\n",
    "plain over two lines in a sequence": "- a\n  b\n",
    "top-level plain over two lines": "a\nb\n",
    "single-quoted over two lines": "a: 'x\n  y'\n",
    "double-quoted over two lines": 'a: "x\n  y"\n',
    "double-quoted line continuation": 'a: "x\\\n  y"\n',
    "flow: a pair in a sequence": "a: [b: 1]\n",
    "flow: a key without a value": "a: {b, c: 1}\n",
    "flow: a trailing comma": "a: [1, 2,]\n",
    "flow: an empty entry": "a: [1, , 2]\n",
    "flow: a key given twice": "a: {b: 1, b: 2}\n",
    "flow: a collection as a key": "a: {[b]: 1}\n",
    "flow: a plain scalar over two lines": "a: [b\n  c]\n",
    "flow: a key and its colon on two lines": "a: {b\n  : 1}\n",
    "flow: a continuation line not indented": "a: {b: 1,\nc: 2}\n",
    "flow: not closed": "a: [1, 2\n",
    "flow: a colon without a space": "a: {b:1}\n",
    "flow: a colon before a flow indicator": "a: [b:]\n",
    "flow: a complex key": "{a: 1}: b\n",
    "flow: text after it": "a: [1] b\n",
    "flow: a quoted scalar over two lines": "a: ['b\n  c']\n",
    "flow: an anchor": "a: [&x 1, *x]\n",
    "flow: a tag": "a: [!!str 1]\n",
    "flow: nesting over the limit": "a: " + "[" * 100 + "]" * 100 + "\n",
    "flow: a comment right after a value": "a: ['b'#c\n  ]\n",
    "complex key": "? a\n: b\n",
    "collection as a key": "{}: a\n",
    "tab in indentation": "a:\n\tb: 1\n",
    "tab in a value": "a: b\tc\n",
    "carriage return": "a: 1\r\nb: 2\r\n",
    "byte order mark": "\ufeffa: 1\n",
    "byte order mark inside": "a: \ufeffb\n",
    "next line": "a: b\x85c\n",
    "line separator": "a: b\u2028c\n",
    "control character": "a: \x01\n",
    "delete": "a: \x7f\n",
    "C1 control": "a: \x9b\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "document end before any document": "...\n",
    "document after a document end": "a: 1\n...\nb: 2\n",
    "mapping on the --- line": "--- a: 1\n",
    "sequence on the --- line": "--- - a\n",
    "content after ...": "a: 1\n... b\n",
    "merge key": "<<: {}\n",
    "value key": "=: 1\n",
    "value scalar": "a: =\n",
    "octal": "a: 010\n",
    "hex": "a: 0x1F\n",
    "binary": "a: 0b101\n",
    "sexagesimal": "a: 1:30\n",
    "underscores": "a: 1_000\n",
    "float without integer part": "a: .5\n",
    "infinity": "a: .inf\n",
    "not a number": "a: .nan\n",
    "sexagesimal float": "a: 1:30.5\n",
    "unusual escape": 'a: "\\q"\n',
    "escaped quote that libyaml refuses": 'a: "\\\'"\n',
    "surrogate escape": 'a: "\\ud800"\n',
    "key of 1000 bytes": "k" * 1000 + ": v\n",
    "deep nesting": "".join(" " * i + "a:\n" for i in range(150)),
    "comment right after a quoted value": "a: 'b'#c\n",
    "value after a value": "a: b: c\n",
    "sequence after a key on its line": "a: - b\n",
    "mapping entry in a sequence": "- a\nb: 1\n",
    "wrong indentation": "- a: 1\n b: 2\n",
    "more indentation after a value": "a: 1\n b: 2\n",
    "text after a quoted value": "a: 'b' c\n",
    "reserved indicator": "a: @x\n",
    "question-mark plain scalar": "?x: 1\n",
    "colon plain scalar": "a: :x\n",
}


@pytest.mark.parametrize("text", DECLINED.values(), ids=DECLINED.keys())
def test_declines(text: str) -> None:
    assert load_all(text) is None


def test_an_integer_beyond_pythons_digit_limit_declines() -> None:
    # int() refuses more than 4300 digits (Python >= 3.11): PyYAML's error, not a crash here
    assert load_all("a: " + "1" * 5000 + "\n") is None


def test_lone_surrogates_decline() -> None:
    assert load_all("a: \udcff\n") is None


def test_the_loader_takes_it_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "parse_yaml_rs", lambda text: pytest.fail("yaml-rs was asked"))
    assert documents.parse_yaml("a: 1\n") == [{"a": 1}]


# --- Hypothesis --------------------------------------------------------------------------

keys = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    st.sampled_from(["a", "kind", "yes", "1", "null", "on", "1.5", "-", "a b", "<<", "="]),
    st.integers(-5, 5),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(SCALARS),
)
json_like = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(json_like, min_size=1, max_size=3),
    st.sampled_from([False, None, True]),
    st.sampled_from([2, 4]),
    st.booleans(),
    st.booleans(),
)
def test_safe_dump_documents(
    docs: list[Any], flow: bool | None, indent: int, explicit_start: bool, wide: bool
) -> None:
    text = yaml.safe_dump_all(
        docs,
        default_flow_style=flow,
        indent=indent,
        explicit_start=explicit_start,
        sort_keys=False,
        allow_unicode=True,
        width=10**6 if wide else 80,
    )
    check(text)


LINE_PIECES = [
    "a:",
    "b: 1",
    "- ",
    "-",
    "- x",
    "- a: 1",
    "- - y",
    "c: 'q'",
    'd: "e\\n"',
    "e: {}",
    "f: []",
    "# c",
    "g: yes",
    "h: 1.5",
    "---",
    "...",
    "x",
    "'k': v",
    "i: j # c",
    "k:: l",
    "",
    "m: -",
    "n: a: b",
    "? o",
    ": p",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(LINE_PIECES)), max_size=8))
def test_random_yaml_like_lines(lines: list[tuple[int, str]]) -> None:
    text = "".join(" " * indent + piece + "\n" for indent, piece in lines)
    got = check(text)
    if pyyaml(text) == "error":
        assert got is None, text


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab:- #'\"\n\\{}[].01xyn~", max_size=30))
def test_random_texts(text: str) -> None:
    got = check(text)
    if pyyaml(text) == "error":
        assert got is None, text
