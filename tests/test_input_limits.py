"""What one input may hold (kueue_fast/loader/limits.py), on every reader and
through the real command: YAML alias expansion bounded by yaml.v3's rule,
nesting at most 100 deep, no key given twice, no endless or special file read
to the end, directories listed without walking what -R would not read.

Bad input gets one line on standard error and exit status 2 from
``schedule -o json|yaml|summary`` and ``lint`` on both engines, never a
traceback, a hang or the machine's memory."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kueue_fast import loader
from kueue_fast.api.errors import ParseError
from kueue_fast.loader import _json_items, _nesting, _yaml_block, documents, limits, pyyaml_reader

KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")

QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
"""


def workload(pod_spec_lines: str = "") -> str:
    """A Workload document whose pod template spec also holds pod_spec_lines
    (indented for it)."""
    return (
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
        "metadata: {name: w1, namespace: default}\nspec:\n  queueName: q\n  podSets:\n"
        "  - name: main\n    count: 1\n    template:\n      spec:\n"
        + pod_spec_lines
        + "        containers:\n"
        "        - name: c\n          image: busybox\n          resources: {requests: {cpu: '1'}}\n"
    )


def alias_bomb(levels: int) -> str:
    """10**levels strings from a few hundred bytes: anchors in a volume's
    open field, the last one as the container's args."""
    anchors = ['          x-a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]\n']
    for i in range(1, levels):
        anchors.append(f"          x-a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n")
    text = QUEUES + workload(
        "        volumes:\n        - name: v\n          emptyDir: {}\n" + "".join(anchors)
    )
    return text.rstrip("\n") + f"\n          args: *a{levels - 1}\n"


def nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


ENGINES = ["native", "reference"]
# Every command that reads the input, in every output and on both engines (lint has no engine).
COMMANDS = [
    pytest.param(["schedule", "-o", output, "--engine", engine], id=f"{output}-{engine}")
    for output in ("json", "yaml", "summary")
    for engine in ENGINES
] + [pytest.param(["lint"], id="lint")]


def _memory_limit() -> None:  # in the child: a runaway read fails instead of taking the machine
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(
    args: list[str], stdin: Any = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KUEUE_FAST_")}
    environ.update(env or {})
    return subprocess.run(
        [KUEUE_FAST, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
        stdin=stdin,
        preexec_fn=_memory_limit,
    )


def assert_one_line_error(p: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2 and one error line (lint: on standard output, with its count)."""
    lint = p.args[1] == "lint"
    err = p.stdout if lint else p.stderr
    assert p.returncode == 2, f"exit {p.returncode}, stderr: {p.stderr[-2000:]!r}"
    assert "Traceback" not in p.stderr
    if lint:
        assert err.endswith("\n1 error(s), 0 warning(s)\n"), err
        err = err.split("\n")[0] + "\n"
    else:
        assert p.stdout == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)


def read_text(text: str, tmp_path: Path, name: str = "in.yaml") -> list[Any]:
    path = tmp_path / name
    path.write_text(text)
    return [d.obj for d in loader.read_documents([str(path)])]


# --- 1. YAML aliases -------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_an_alias_bomb_is_one_error_naming_file_and_document(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(6))  # 10**6 strings: accepted (and expanded) before the limit
    p = run([*command, str(path)])
    assert_one_line_error(p, f"{path} (document 4): invalid YAML: document contains excessive aliasing")


def test_a_billion_laughs_is_refused_while_reading(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(9))  # 10**9 strings in 1.4 KB
    with pytest.raises(ParseError) as e:
        loader.read_documents([str(path)])
    assert e.value.source == f"{path} (document 4)"
    assert "excessive aliasing" in e.value.message


@pytest.mark.parametrize(
    "decoded, ratio",
    [(0, 0.99), (1000, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (10**9, 0.10)],
)
def test_the_allowed_alias_ratio_is_yaml_v3s(decoded: int, ratio: float) -> None:
    # gopkg.in/yaml.v3 decode.go allowedAliasRatio
    assert limits.allowed_alias_ratio(decoded) == pytest.approx(ratio)


def test_an_anchor_holding_an_alias_of_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as e:
        read_text(QUEUES + workload("        x: &a [x, *a]\n"), tmp_path)
    assert (
        e.value.message == "invalid YAML: an anchor's value contains an alias of itself at line 32, column 12"
    )


def test_aliases_within_the_limits_are_read_as_before(tmp_path: Path) -> None:
    text = "a: &r {cpu: '1'}\nb: *r\nc: [*r, *r]\n"
    assert read_text(text + "kind: X\n", tmp_path) == [
        {"a": {"cpu": "1"}, "b": {"cpu": "1"}, "c": [{"cpu": "1"}, {"cpu": "1"}], "kind": "X"}
    ]


def test_many_documents_together_may_not_expand_beyond_what_they_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each document alone passes yaml.v3's rule; together they stand for far more than they write
    monkeypatch.setattr(limits, "ALIAS_RATIO_RANGE_HIGH", 2_000)
    doc = "x: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ny: [*a, *a, *a, *a, *a, *a, *a, *a]\n"
    with pytest.raises(ParseError) as e:
        read_text("---\n".join([doc] * 40), tmp_path)
    assert "the documents contain excessive aliasing" in e.value.message
    assert e.value.source.endswith("(document 23)")  # 23 x 88 aliased nodes > 2,000


def test_the_fast_readers_leave_aliases_to_pyyaml() -> None:
    # the block reader and yaml-rs never expand an alias: only PyYAML does, under the limits
    for text in ("a: &x [1]\nb: *x\n", "a: &x 1\nb: [*x]\n", "a: {b: &x 1, c: *x}\n", "- &x a\n- *x\n"):
        assert _yaml_block.load_all(text) is None
        assert documents.parse_yaml_rs(text) is None


def test_merged_keys_may_be_given_again() -> None:
    text = (
        "base: &b {k: 0, j: 0}\n"
        "a: {x: &d {<<: *b, k: 1}}\n"  # the anchor is flattened as b's merge source first
        "b: {<<: *d, j: 2}\n"
    )
    assert pyyaml_reader.pyyaml_documents(text, "t") == [yaml.load(text, Loader=yaml.CSafeLoader)]


# yaml.v3's counting, transcribed (decode.go decoder.unmarshal and alias) onto the
# events of a text, expanding every alias: the oracle for the counts without expansion.
class YamlV3:
    def __init__(self, text: str) -> None:
        self.decode_count = 0
        self.alias_count = 0
        self.alias_depth = 0
        self.open_aliases: set[int] = set()
        self.events = list(yaml.parse(text, Loader=yaml.CSafeLoader))
        self.anchors: dict[str, Any] = {}

    def documents(self) -> Iterator[Any]:
        events = iter(self.events)
        for ev in events:
            if isinstance(ev, yaml.DocumentStartEvent):
                yield self.node(events, next(events))

    def node(self, events: Iterator[Any], ev: Any) -> Any:
        if isinstance(ev, yaml.AliasEvent):
            return ("alias", ev.anchor)
        if isinstance(ev, yaml.ScalarEvent):
            n: Any = ("scalar", ev.value, [])
        else:
            n = ("collection", None, [])
            end = yaml.SequenceEndEvent if isinstance(ev, yaml.SequenceStartEvent) else yaml.MappingEndEvent
            if ev.anchor:
                self.anchors[ev.anchor] = n
            for child in events:
                if isinstance(child, end):
                    break
                n[2].append(self.node(events, child))
            return n
        if ev.anchor:
            self.anchors[ev.anchor] = n
        return n

    def refuses(self, root: Any, max_depth: int) -> bool:
        self.decode_count, self.alias_count = 1, 0  # the document node
        try:
            self.unmarshal(root, 1)
        except ValueError:
            return True
        return False

    def unmarshal(self, n: Any, depth: int) -> None:
        self.decode_count += 1
        if self.alias_depth > 0:
            self.alias_count += 1
        if limits._excessive(self.decode_count, self.alias_count):
            raise ValueError("document contains excessive aliasing")
        if n[0] == "alias":
            if id(n) in self.open_aliases:
                raise ValueError("anchor value contains itself")
            self.open_aliases.add(id(n))
            self.alias_depth += 1
            try:
                self.unmarshal(self.anchors[n[1]], depth)
            finally:
                self.alias_depth -= 1
                self.open_aliases.discard(id(n))
            return
        if n[0] == "collection":
            if depth > limits.MAX_NESTING_DEPTH:
                raise ValueError("exceeded maximum nesting depth")
            for child in n[2]:
                self.unmarshal(child, depth + 1)


@st.composite
def aliased_texts(draw: st.DrawFn) -> str:
    """A flow-style YAML document whose collections may carry anchors and
    whose nodes may be aliases of any anchor already started (one still open
    makes a recursive value)."""
    anchors: list[str] = []

    def node(depth: int) -> str:
        kind = draw(st.sampled_from(["scalar", "alias", "seq", "map"] if depth < 5 else ["scalar", "alias"]))
        if kind == "alias" and anchors:
            return "*" + draw(st.sampled_from(anchors))
        if kind in ("scalar", "alias"):
            return draw(st.sampled_from(["x", "1", "yes", "''"]))
        anchor = ""
        if draw(st.booleans()):
            anchors.append(f"a{len(anchors)}")
            anchor = f"&{anchors[-1]} "
        n = draw(st.integers(0, 4))
        if kind == "seq":
            return anchor + "[" + ", ".join(node(depth + 1) for _ in range(n)) + "]"
        return anchor + "{" + ", ".join(f"k{i}: {node(depth + 1)}" for i in range(n)) + "}"

    return "root: " + node(1) + "\n"


@settings(max_examples=300, deadline=None)
@given(aliased_texts())
def test_the_alias_counts_decide_as_yaml_v3_expanding_everything(text: str) -> None:
    # thresholds scaled down, so that small documents meet every part of the rule
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(limits, "ALIAS_MIN_ALIASED", 4)
        mp.setattr(limits, "ALIAS_MIN_DECODED", 12)
        mp.setattr(limits, "ALIAS_RATIO_RANGE_LOW", 40)
        mp.setattr(limits, "ALIAS_RATIO_RANGE_HIGH", 400)
        mp.setattr(limits, "MAX_NESTING_DEPTH", 5)
        oracle = YamlV3(text)
        (root,) = list(oracle.documents())
        want = oracle.refuses(root, limits.MAX_NESTING_DEPTH)
        node = yaml.compose(text, Loader=pyyaml_reader.LOADER)
        try:
            limits.check_yaml_nodes(node)
            got = False
        except limits.TextProblem:
            got = True
    assert got == want, text


# --- 2. special and endless files ------------------------------------------------------------


def test_dev_zero_is_refused_after_its_first_chunk() -> None:
    p = run(["schedule", "/dev/zero"])
    assert_one_line_error(p, "/dev/zero: file is binary, not YAML or JSON")


class EndlessText(io.TextIOBase):
    """Standard input that never ends (``yes 'a: b' | kueue-fast schedule -``)."""

    def read(self, size: int | None = -1) -> str:
        assert size is not None and size >= 0, "asked to read an endless stream to its end"
        return ("a: b\n" * (size // 5 + 1))[:size]


class EndlessBytes(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        b[:] = b"a: b\n" * (len(b) // 5) + b"a: b\n"[: len(b) % 5]
        return len(b)


class WithBuffer(io.TextIOBase):
    def __init__(self, raw: io.RawIOBase) -> None:
        self.buffer = io.BufferedReader(raw)

    def read(self, size: int | None = -1) -> str:
        raise AssertionError("read as text")


@pytest.mark.parametrize("stdin", [EndlessText, lambda: WithBuffer(EndlessBytes())], ids=["text", "bytes"])
def test_endless_standard_input_is_cut_at_the_limit(monkeypatch: pytest.MonkeyPatch, stdin: Any) -> None:
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "3Mi")
    with pytest.raises(ParseError) as e:
        loader.read_documents(["-"], stdin=stdin())
    assert (
        str(e.value) == "<stdin>: input larger than 3Mi bytes (the limit; KUEUE_FAST_MAX_INPUT_BYTES sets it)"
    )


def test_a_file_larger_than_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "100")
    path = tmp_path / "big.yaml"
    path.write_text(QUEUES)
    with pytest.raises(ParseError) as e:
        loader.read_documents([str(path)])
    assert e.value.message == "file larger than 100 bytes (the limit; KUEUE_FAST_MAX_INPUT_BYTES sets it)"


@pytest.mark.parametrize("setting", ["", "  ", "0", "1e9", "12MB", "-5", "5Mi "])
def test_the_limit_setting(monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    monkeypatch.setenv(limits.MAX_INPUT_ENV, setting)
    if setting.strip() in ("", "5Mi"):
        assert limits.max_input_bytes()[0] == (512 << 20 if not setting.strip() else 5 << 20)
    else:
        with pytest.raises(ValueError, match="KUEUE_FAST_MAX_INPUT_BYTES"):
            limits.max_input_bytes()


def test_a_bad_limit_setting_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(QUEUES)
    p = run(["schedule", str(path), str(path)], env={limits.MAX_INPUT_ENV: "lots"})
    assert_one_line_error(p, "error: KUEUE_FAST_MAX_INPUT_BYTES='lots': expected a positive number of bytes")


def test_a_fifo_in_a_directory_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(QUEUES)
    os.mkfifo(tmp_path / "b.yaml")  # nothing writes it: reading would block for ever
    p = run(["schedule", str(tmp_path), "-o", "summary"])
    assert p.returncode == 0, p.stderr
    assert p.stderr == f"warning: {tmp_path / 'b.yaml'}: not a regular file; skipped\n"


def test_a_fifo_named_on_the_command_line_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "in.yaml"  # as `kueue-fast schedule <(cat a.yaml)` gives one
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as f:
            f.write(QUEUES)

    writer = threading.Thread(target=write)
    writer.start()
    docs = loader.read_documents([str(fifo)])
    writer.join()
    assert [d.obj["kind"] for d in docs] == ["ResourceFlavor", "ClusterQueue", "LocalQueue"]


def test_line_breaks_read_as_text_files_read_them(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    path.write_bytes(b"kind: A\r\nx: 'a\r\n  b'\r\n---\rkind: B\r\n")
    assert [d.obj for d in loader.read_documents([str(path)])] == [{"kind": "A", "x": "a b"}, {"kind": "B"}]


# --- 3. nesting ------------------------------------------------------------------------------


def test_json_nested_5000_deep_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(nested_list(5000))
    p = run(["schedule", str(path)])
    assert_one_line_error(
        p, f"{path}: invalid JSON: exceeded maximum nesting depth of 100 at line 1, column 101"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_container_arg_600_deep_is_one_error(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(QUEUES + workload().rstrip("\n") + "\n          args: " + nested_list(600) + "\n")
    p = run([*command, str(path)])
    assert_one_line_error(p, "(document 4): invalid YAML: exceeded maximum nesting depth of 100 at line 36")


def block_mappings(depth: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "a: 1\n"


DEEP_TEXTS = {
    "block": block_mappings,  # our block reader, then PyYAML
    "flow": lambda d: "a: " + nested_list(d - 1) + "\n",  # yaml-rs, then PyYAML
    "tagged": lambda d: "a: !!str x\nb: " + nested_list(d - 1) + "\n",  # PyYAML only
    "aliased": lambda d: "a: &x 1\nb: " + "[" * (d - 1) + "*x" + "]" * (d - 1) + "\n",  # PyYAML's node walk
    "json": lambda d: '{"a": ' + nested_list(d - 1) + "}",
}


@pytest.mark.parametrize("style", DEEP_TEXTS)
def test_every_reader_reads_100_levels_and_refuses_101(tmp_path: Path, style: str) -> None:
    make = DEEP_TEXTS[style]
    name = "in.json" if style == "json" else "in.yaml"
    assert len(read_text(make(100), tmp_path, name)) == 1
    with pytest.raises(ParseError) as e:
        read_text(make(101), tmp_path, name)
    assert "exceeded maximum nesting depth of 100 at line " in e.value.message
    if style != "json":
        assert _yaml_block.load_all(make(101)) is None
        assert documents.parse_yaml_rs(make(101)) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "é", "\\"]), children, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(1, 12))
def test_the_compiled_nesting_check_is_its_definition(value: Any, max_depth: int) -> None:
    assert _nesting.nesting_exceeds(value, max_depth) == limits.nesting_exceeds_py(value, max_depth)


# --- 4. duplicate keys -----------------------------------------------------------------------

DUPLICATES = {
    # reader: (text, name, message)
    "block": (
        "kind: ClusterQueue\nspec:\n  nominalQuota: 1\n  nominalQuota: 100\n",
        "in.yaml",
        'invalid YAML: duplicate key "nominalQuota" at line 4, column 3 (first at line 3)',
    ),
    "flow": (
        "kind: ClusterQueue\nspec: {resources: [{name: cpu, nominalQuota: 1, nominalQuota: 100}]}\n",
        "in.yaml",
        'invalid YAML: duplicate key "nominalQuota" at line 2, column 49 (first at line 2)',
    ),
    "pyyaml": (
        "kind: ClusterQueue\nspec:\n  x: !!str y\n  x: z\n",
        "in.yaml",
        'invalid YAML: duplicate key "x" at line 4, column 3 (first at line 3)',
    ),
    "two files joined": (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\napiVersion: v1\nkind: Namespace\n",
        "in.yaml",
        "invalid YAML: duplicate key \"apiVersion\" at line 4, column 1 (first at line 1: a missing '---' "
        "between documents?)",
    ),
    "json": (
        '{"kind": "Namespace",\n "metadata": {"name": "a",\n  "name": "b"}}',
        "in.json",
        'invalid JSON: duplicate key "name" at line 3, column 3 (first at line 2)',
    ),
    "json escaped": (
        '{"kind": "Namespace", "metadata": {"name": "a", "n\\u0061me": "b"}}',
        "in.json",
        'invalid JSON: duplicate key "name" at line 1, column 49 (first at line 1)',
    ),
    "json list item": (
        '{"kind": "List", "items": [{"kind": "Namespace"},\n{"kind": "Namespace", "kind": "Namespace"}]}',
        "in.json",
        'invalid JSON: duplicate key "kind" at line 2, column 23 (first at line 2)',
    ),
}


@pytest.mark.parametrize("case", DUPLICATES)
def test_a_key_given_twice_is_refused_with_its_lines(tmp_path: Path, case: str) -> None:
    text, name, message = DUPLICATES[case]
    with pytest.raises(ParseError) as e:
        read_text(text, tmp_path, name)
    assert e.value.message == message


def test_lint_refuses_a_key_given_twice(tmp_path: Path) -> None:
    path = tmp_path / "cq.yaml"
    path.write_text(QUEUES.replace("nominalQuota: 9}", "nominalQuota: 9, nominalQuota: 90}"))
    assert_one_line_error(run(["lint", str(path)]), 'duplicate key "nominalQuota" at line 15')


def test_the_block_reader_leaves_a_key_given_twice_to_pyyaml() -> None:
    assert _yaml_block.load_all("a: 1\nb:\n  c: 1\n  c: 2\n") is None
    assert _yaml_block.load_all("a: 1\nb:\n  c: 1\n  d: 2\n") == [{"a": 1, "b": {"c": 1, "d": 2}}]


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON texts, some with a key repeated by hand, some with escaped keys."""
    text = json.dumps(
        draw(json_values), ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))
    )
    if draw(st.booleans()) and '": ' in text:
        at = text.index('": ') + 3
        text = text[:at] + '"b", "b": ' + text[at:]  # a second key "b" (and maybe a third)
    return text


@settings(max_examples=500, deadline=None)
@given(json_texts(), st.integers(1, 6))
def test_the_compiled_json_filter_misses_no_problem(text: str, max_depth: int) -> None:
    problem = limits.json_problem(text, max_depth)
    if problem is not None:
        assert _json_items.json_suspect(text, max_depth), (text, problem)
    if not _json_items.json_suspect(text, max_depth):
        assert problem is None


# --- 5. one grammar ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["annotations: {note: |not valid}\n", "a: [|x]\n", "a: {b: >x}\n", "kind: X\na: [b, |c]\n"]
)
def test_what_pyyaml_refuses_no_reader_accepts(tmp_path: Path, text: str) -> None:
    assert documents.parse_yaml(text) is None
    with pytest.raises(ParseError, match="invalid YAML: found character that cannot start any token"):
        read_text("kind: Namespace\n" + text, tmp_path)


# --- 11. directories -----------------------------------------------------------------------------


def test_without_R_no_subdirectory_is_looked_into(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(QUEUES)
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    listed: list[str] = []
    scandir = os.scandir

    def recording(path: Any) -> Any:
        listed.append(str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", recording)
    state = loader.load([str(tmp_path)])
    assert listed == [str(tmp_path)]
    assert [(w.source, w.message) for w in state.warnings] == [
        (str(tmp_path / "sub"), "subdirectory not read (-R reads subdirectories)")
    ]


@pytest.mark.parametrize("recursive", [False, True])
def test_an_unreadable_subdirectory_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recursive: bool
) -> None:
    (tmp_path / "a.yaml").write_text(QUEUES)
    (tmp_path / "locked").mkdir()
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "b.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
    scandir = os.scandir

    def refusing(path: Any) -> Any:  # chmod 000 stops everyone but root
        if str(path) == str(tmp_path / "locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    state = loader.load([str(tmp_path)], recursive=recursive)
    warned = [(w.source, w.message) for w in state.warnings]
    if recursive:
        assert warned[0] == (str(tmp_path / "locked"), "directory not read: Permission denied")
        assert list(state.namespaces) == ["b"]
    else:
        assert warned[:2] == [
            (str(tmp_path / "locked"), "subdirectory not read (-R reads subdirectories)"),
            (str(tmp_path / "open"), "subdirectory not read (-R reads subdirectories)"),
        ]


def test_an_unreadable_directory_named_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(path: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(ParseError) as e:
        loader.load([str(tmp_path)])
    assert str(e.value) == f"{tmp_path}: cannot read directory: Permission denied"
