"""The loader's YAML readers agree, so that what is accepted and what it
means never depend on which optional packages are installed: our block
reader (``_yaml_block.load_all``), yaml-rs (``documents.parse_yaml_rs``) and
the two in the loader's order (``documents.parse_yaml``) each give exactly
the documents of the exact path (PyYAML held to the loader's limits,
``pyyaml_reader.pyyaml_documents``: its grammar is the loader's), types
included, or decline (None); and each declines every text the exact path
refuses.

The corpus: every YAML file under tests/ (the scenarios among them), and
Hypothesis texts: JSON-like documents written in every style PyYAML's dumper
has, the scenarios, and both with mutations (a YAML indicator, an anchor or
alias, a tag, a tab, a block scalar, a line given twice, collections nested
around the 100-level limit) put in at random places.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st
from values import typed

from kueue_fast.api.errors import ParseError
from kueue_fast.loader import _yaml_block, documents, pyyaml_reader

TESTS = Path(__file__).parent
ALL_YAML = sorted(p for p in TESTS.rglob("*") if p.suffix in (".yaml", ".yml"))
SCENARIOS = [p.read_text() for p in sorted((TESTS / "scenarios").glob("*.yaml"))]
REFUSED = "refused"

READERS = {
    "block": _yaml_block.load_all,
    "yaml-rs": documents.parse_yaml_rs,
    "block, then yaml-rs": documents.parse_yaml,
}
needs_yaml_rs = pytest.mark.skipif(not documents.available(), reason="yaml-rs is not installed")


def exact(text: str) -> Any:
    try:
        return typed(pyyaml_reader.pyyaml_documents(text, "text"))
    except ParseError:
        return REFUSED


def assert_readers_agree(text: str) -> None:
    want = exact(text)
    for name, read in READERS.items():
        got = read(text)
        if got is None:
            continue
        assert want != REFUSED, f"{name} accepts what the loader refuses: {text!r}"
        assert typed(got) == want, f"{name} reads another value: {text!r}"


@needs_yaml_rs
@pytest.mark.parametrize("path", ALL_YAML, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_test_yaml_file(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: the loader refuses it before parsing")
    assert_readers_agree(text)


# --- Hypothesis ---------------------------------------------------------------------------

keys = st.one_of(
    st.sampled_from(["a", "kind", "name", "yes", "1", "null", "on", "1.5", "-", "a b", "<<", "=", "x: y"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
    st.integers(-3, 3),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10),
    st.sampled_from(
        ["500m", "1Gi", "010", "1e3", "0x1F", "1:30", ".inf", "~", "", "|", ">", "&a", "*a", "!x"]
    ),
)
json_like = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


@st.composite
def dumped(draw: st.DrawFn) -> str:
    """Documents as PyYAML's dumper writes them, in one of its styles."""
    return yaml.safe_dump_all(
        draw(st.lists(json_like, min_size=1, max_size=3)),
        default_flow_style=draw(st.sampled_from([False, None, True])),
        default_style=draw(st.sampled_from([None, None, "'", '"'])),
        indent=draw(st.sampled_from([2, 4])),
        explicit_start=draw(st.booleans()),
        sort_keys=False,
        allow_unicode=draw(st.booleans()),
        width=draw(st.sampled_from([20, 80, 10**6])),
    )


PIECES = [
    "|",
    ">",
    "|-\n  x\n",
    ">\n  folded\n",
    "&a ",
    "*a",
    "&a [1, 2]",
    "*b",
    "!!str ",
    "!!int ",
    "!x ",
    "? ",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    ", ",
    "{a: 1, a: 2}",
    "# c",
    " #",
    "'",
    '"',
    "\t",
    "\n",
    "\n\n",
    "  ",
    "---\n",
    "...\n",
    "--- ",
    "<<: ",
    "<<: *a\n",
    "%YAML 1.1\n---\n",
    "\\",
    "@",
    "`",
    "=",
    "\ufeff",
    "\r\n",
    "[" * 99 + "]" * 99,
    "[" * 101 + "]" * 101,
    "yes",
    "0o17",
    "1_000",
]


@st.composite
def mutated(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> str:
    """A text with a few pieces put in at random places, or one of its lines repeated."""
    text = draw(texts)
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()) and "\n" in text:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])  # a key twice, most often
            text = "\n".join(lines)
        else:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
    return text


def _scalar(draw: st.DrawFn, value: Any) -> str:
    """A scalar as a person may write it: plain, single- or double-quoted."""
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_style=None).split("\n")[0]
    style = draw(st.sampled_from(["plain", "plain", "'", '"']))
    if style == "'":
        return "'" + text.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(text, ensure_ascii=draw(st.booleans()))
    return text


@st.composite
def hand_written(draw: st.DrawFn) -> str:
    """Documents as people write them by hand: block mappings and sequences
    whose smaller parts are flow collections (``metadata: {name: a,
    namespace: b}``, ``requests: {cpu: '500m', memory: 1Gi}``), scalars
    plain or quoted, comments, flow collections over several lines,
    document markers."""

    def flow(value: Any, indent: int) -> str:
        if not isinstance(value, (dict, list)):
            return _scalar(draw, value)
        pad = " " if draw(st.booleans()) else ""
        if isinstance(value, dict):
            entries = [f"{_scalar(draw, k)}: {flow(v, indent)}" for k, v in value.items()]
        else:
            entries = [flow(v, indent) for v in value]
        text = ""
        for i, entry in enumerate(entries):
            if i:
                text += draw(st.sampled_from([", ", ",", ", ", ", # c\n", ",\n"]))
                if text.endswith("\n"):
                    text += " " * (indent + draw(st.integers(1, 3)))
            text += entry
        o, c = ("{", "}") if isinstance(value, dict) else ("[", "]")
        return o + pad + text + pad + c

    def block(value: Any, indent: int) -> str:
        if not isinstance(value, (dict, list)) or not value or draw(st.integers(0, 3)) == 0:
            return " " + flow(value, indent) + draw(st.sampled_from(["", "", "  # c"])) + "\n"
        out = "\n"
        for k, v in value.items() if isinstance(value, dict) else enumerate(value):
            lead = f"{_scalar(draw, k)}:" if isinstance(value, dict) else "-"
            out += " " * indent + lead + block(v, indent + 2)
        return out

    docs = draw(st.lists(json_like, min_size=1, max_size=3))
    return "".join(
        draw(st.sampled_from(["---", "--- # c", "# c\n---"]))
        + block(d, 0)
        + draw(st.sampled_from(["", "...\n"]))
        for d in docs
    )


@needs_yaml_rs
@settings(max_examples=400, deadline=None)
@given(hand_written())
def test_hand_written_documents(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@settings(max_examples=400, deadline=None)
@given(mutated(hand_written()))
def test_mutated_hand_written_documents(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@settings(max_examples=400, deadline=None)
@given(dumped())
def test_dumped_documents(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@settings(max_examples=600, deadline=None)
@given(mutated(dumped()))
def test_mutated_dumped_documents(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@settings(max_examples=300, deadline=None)
@given(mutated(st.sampled_from(SCENARIOS)))
def test_mutated_scenarios(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@pytest.mark.parametrize(
    "text",
    [
        "annotations: {note: |not valid}\n",  # yaml-rs reads it as "|not valid"
        "a: [|x]\n",
        "a: {b: >x}\n",
        "a: 1\na: 2\n",
        "a: {b: 1, b: 2}\n",
        "a: &x [*x]\n",
        "a: " + "[" * 100 + "]" * 100 + "\n",
        "a: " + "[" * 99 + "]" * 99 + "\n",
        "a:\n" + "".join("  " * i + "- \n" for i in range(1, 101)),
        "a:\n" + "".join("  " * i + "- \n" for i in range(1, 100)),
    ],
)
def test_known_differences(text: str) -> None:
    assert_readers_agree(text)


@needs_yaml_rs
@pytest.mark.parametrize("text", ["{[a, b]: c}\n", "{[[[]]]}\n", "[a]: b\n", "{{a: 1}: 2}\n"])
def test_a_collection_as_a_key_is_refused_as_pyyaml_refuses_it(text: str) -> None:
    """yaml-rs reads a sequence (or mapping) key as a tuple; PyYAML refuses an
    unhashable key, and the loader's grammar is PyYAML's (hypothesis found
    ``{[[...]]}``)."""
    assert_readers_agree(text)
