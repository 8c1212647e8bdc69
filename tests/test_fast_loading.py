"""The fast loading paths give exactly what the plain paths give.

* YAML: ``loader.documents.parse_yaml`` (our block reader, then yaml-rs, YAML 1.2)
  and yaml-rs alone (``parse_yaml_rs``) give PyYAML's documents or decline (None),
  on every test file, on a table of plain scalars that the two YAML versions read
  differently, and on random scalars. (The block reader alone: test_yaml_block.py.)
* JSON: orjson's value, else json's value or json's message.
* Workloads: ``build_state``'s bulk path (``kueue_fast.loader._bulk.fast_workload``) gives the
  same ClusterState as ``parse_workload`` for every object, and the same error.
* Compiler: the cached scheduling hash equals ``scheduling_hash``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from values import typed

from kueue_fast import loader
from kueue_fast.api import model as m
from kueue_fast.api.errors import InputError, ParseError
from kueue_fast.engine.inputs import compile_topology
from kueue_fast.engine.workloads import WorkloadCompiler, scheduling_hash

# The loader's documents module (fast YAML glue included) under the name it
# had before issue 11 (fastload): Hypothesis derives the
# examples of a derandomized test from its source, so this keeps them the same.
from kueue_fast.loader import (
    _json_items,
    _yaml_block,
    _yaml_risk,
    documents as fastload,
    limits,
    pyyaml_reader,
)
from kueue_fast.loader.fastjson import orjson

TESTS = Path(__file__).parent
YAML_FILES = sorted(
    p for d in ("scenarios", "bad_inputs") for p in (TESTS / d).rglob("*") if p.suffix in (".yaml", ".yml")
)
needs_yaml_rs = pytest.mark.skipif(not fastload.available(), reason="yaml-rs is not installed")


def pyyaml_docs(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=pyyaml_reader.LOADER))


FAST_READERS = (fastload.parse_yaml, fastload.parse_yaml_rs)


def same_as_pyyaml(text: str) -> None:
    for read in FAST_READERS:
        fast = read(text)
        if fast is not None:
            assert typed(fast) == typed(pyyaml_docs(text)), (read.__name__, text)


def declined(text: str) -> bool:
    return all(read(text) is None for read in FAST_READERS)


# --- YAML ------------------------------------------------------------------------------


@needs_yaml_rs
@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.name)
def test_every_test_yaml_file_reads_as_pyyaml_reads_it(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: the loader rejects it before parsing")
    try:
        want = pyyaml_docs(text)
    except (yaml.YAMLError, ValueError, TypeError, limits.TextProblem):
        assert declined(text)  # PyYAML gives the error
        return
    for read in FAST_READERS:
        fast = read(text)
        if fast is not None:
            assert typed(fast) == typed(want), read.__name__


# Plain scalars whose meaning differs between YAML 1.1 (PyYAML) and YAML 1.2,
# or that look close to such a scalar.
SCALARS = (
    "yes Yes YES no No NO on On ON off Off OFF y Y n N true True TRUE false False FALSE null Null NULL ~ = <<"
    " 0 -0 +0 00 010 0755 08 09 0o17 0O17 0x1F 0X1F 0b101 1_000 0_8 1e3 1E3 1e+3 1e-7 1.5e3 1.5e+3 1.5E-3"
    " 1. .5 -.5 +.5 1.0 -1.5 +1.5 0.1 .inf -.inf .Inf .INF .nan .NaN inf nan 1:30 1:30.5 -1:30 190:20:30"
    " 2025-01-06 2025-01-06T00:00:00Z 500m 1Gi 16Ki 100M 1e 0x 12:ab 9223372036854775808 -1 +1 1.2.3"
    " on-demand no-gpu yes-please a:1 a:1e3 !!str !foo &a *a ? [a] {a: 1} :"
).split()


@needs_yaml_rs
@pytest.mark.parametrize("scalar", SCALARS)
def test_scalars_read_as_pyyaml_reads_them_or_go_to_pyyaml(scalar: str) -> None:
    for text in (
        f"k: {scalar}\n",
        f"- {scalar}\n",
        f"k: [{scalar}, x]\n",
        f"k: {{a: {scalar}}}\n",
        f'{{"k":{scalar}}}\n',
        f"{scalar}: v\n",
        f"k: '{scalar}'\n",
        f"---\nk: {scalar}\n---\n- {scalar}\n",
    ):
        try:
            pyyaml_docs(text)
        except (yaml.YAMLError, ValueError, TypeError, limits.TextProblem):
            assert declined(text), text
            continue
        same_as_pyyaml(text)


@needs_yaml_rs
@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="0123456789+-._:eExXoObBiInNaAfFyYsStTuUlL~!&*?<=%\"' ,[]{}#\t", min_size=1, max_size=12)
)
def test_random_scalars_read_as_pyyaml_reads_them_or_go_to_pyyaml(scalar: str) -> None:
    for text in (f"k: {scalar}\n", f"- {scalar}\n", f"{scalar}\n"):
        try:
            pyyaml_docs(text)
        except (yaml.YAMLError, ValueError, TypeError, limits.TextProblem):
            assert declined(text), text
            continue
        same_as_pyyaml(text)


@needs_yaml_rs
def test_a_stream_holding_one_list_document_stays_one_document() -> None:
    for read in FAST_READERS:
        assert read("- a\n- b\n") == [["a", "b"]]
        assert read("a: 1\n---\n- x\n") == [{"a": 1}, ["x"]]
        assert read("---\n---\na: 1\n") == pyyaml_docs("---\n---\na: 1\n") == [None, {"a": 1}]


@needs_yaml_rs
def test_common_manifests_take_the_fast_path() -> None:
    from kueue_fast.bench import drain_case, drain_objects

    objs = drain_objects(drain_case(n_cq=10, n_cohorts=2, n_workloads=50))
    text = yaml.dump_all(objs, Dumper=yaml.SafeDumper, sort_keys=False)
    assert _yaml_risk.yaml_1_1_risk(text) == -1
    assert fastload.parse_yaml_rs(text) == objs
    assert _yaml_block.load_all(text) == objs


def test_risky_tokens_are_found_where_they_are() -> None:
    assert _yaml_risk.yaml_1_1_risk("a: 500m\nb: 0.5\nc: 10\nd: on-demand\n") == -1
    assert _yaml_risk.yaml_1_1_risk("a: 500m\nb: 010\n") == len("a: 500m\nb: ")
    assert _yaml_risk.yaml_1_1_risk("a: [x, yes]\n") == len("a: [x, ")
    assert _yaml_risk.yaml_1_1_risk("[a, b]: c\n") == len("[a, b")
    assert _yaml_risk.yaml_1_1_risk("\ufeffa: 1\n") == 0
    assert _yaml_risk.yaml_1_1_risk("1e3") == 0


def test_yaml_errors_are_pyyaml_errors(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: [a\n")
    with pytest.raises(ParseError) as e:
        loader.read_documents([str(p)])
    assert "invalid YAML:" in str(e.value) and "line" in str(e.value) and "column" in str(e.value)


# --- JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN, "b": Infinity}',
        '{"a": 123456789012345678901234567890}',
        '{"a": "\\ud800"}',
        '{"a": 1e400}',
        '[{"a": [1, 2.5, true, null, "x"]}]',
    ],
)
def test_json_values_are_json_values(text: str) -> None:
    assert typed(fastload._json_loads(text)) == typed(json.loads(text))


def test_a_json_list_with_a_long_number_is_read_whole_by_json() -> None:
    # orjson reads an integer beyond 64 bits as a float: the items walk declines, json reads it
    text = '{"items": [{"a": 123456789012345678901}]}'
    assert by_item(text) is None
    assert typed(fastload._json_loads(text)) == typed(json.loads(text))
    digits_in_a_string = '{"items": [{"uid": "123456789012345678901"}]}'  # a string: orjson is exact
    assert typed(by_item(digits_in_a_string)) == typed(json.loads(digits_in_a_string))


@pytest.mark.parametrize(
    "text", ['{"a": 1, "a": 2}', '{"items": [1], "items": [2]}', '{"it\\u0065ms": [1], "items": [2]}']
)
def test_a_json_key_given_twice_is_refused(text: str) -> None:
    assert by_item(text) is None
    with pytest.raises(limits.TextProblem, match="duplicate key"):
        fastload._json_loads(text, fastload._sharing())


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": 1,}', "[1 2]", '{"a": tru}'])
def test_json_errors_are_json_errors(tmp_path: Path, text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(ParseError) as got:
        loader.read_documents([str(p)])
    assert f"invalid JSON: {want.value}" in str(got.value)


# --- JSON Lists read item by item, documents sharing equal templates ------------------------

JSON_FILES = sorted(p for p in TESTS.rglob("*.json") if p.parent.name != "EXPECTED")


def as_json_list(text: str) -> str:
    """A YAML file's documents as a compact ``kubectl get -o json`` List."""
    items = [d for d in pyyaml_docs(text) if d is not None]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}})


def by_item(text: str) -> Any:
    return _json_items.json_list_items(text, orjson.loads, None, 100)


@pytest.mark.parametrize("path", JSON_FILES + YAML_FILES, ids=lambda p: p.name)
def test_json_lists_read_item_by_item_are_the_whole_texts_value(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix != ".json":
            text = as_json_list(text)
    except (UnicodeDecodeError, yaml.YAMLError, ValueError):
        pytest.skip("not a valid YAML stream")
    try:
        want = json.loads(text)
    except json.JSONDecodeError:
        assert by_item(text) is None
        return
    got = by_item(text)
    if isinstance(want, dict) and isinstance(want.get("items"), list):
        assert got is not None
    if got is not None:
        assert typed(got) == typed(want)


@pytest.mark.parametrize(
    "text",
    [
        '{"items": []}',
        ' {"kind": "List" , "items" : [ 1 , {"a": [2, "]"]} , "x\\"]" ] , "metadata": {"items": [3]}} ',
        '{"items": [[]], "z": {}}',
        '{"items": ["\u00e9", "\U0001f600", {"\u00e9": 1}]}',
        '{"a": "items", "items": [null, true, false, 1.5, -0.0]}',
        '{"it\\u0065m": [1], "items": [2]}',  # an escaped key: the whole text decides
        '{"items": 3}',
        '[{"items": [1]}]',
    ],
)
def test_json_list_item_by_item_edge_values(text: str) -> None:
    got = by_item(text)
    if got is not None:
        assert typed(got) == typed(json.loads(text))
    assert typed(fastload._json_loads(text, fastload._sharing())) == typed(json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"items": [1,]}',
        '{"items": [,1]}',
        '{"items": [1,,2]}',
        '{"items": [1 2]}',
        '{"items": [{"a": 1}}',
        '{"items": [1], }',
        '{"items": [1]} x',
        '{"items": [1]',
        '{"items": ["a]}',
        '{"items": [NaN]}',
        '{"items": [{"a": 1}{"b": 2}]}',
        '{"items": ["\\ud800"]}',
    ],
)
def test_json_list_errors_are_the_whole_texts_errors(tmp_path: Path, text: str) -> None:
    p = tmp_path / "list.json"
    p.write_text(text)
    try:
        want = json.loads(text)
    except json.JSONDecodeError as e:
        assert by_item(text) is None
        with pytest.raises(ParseError) as got:
            loader.read_documents([str(p)])
        assert f"invalid JSON: {e}" in str(got.value)
        return
    assert typed(fastload._json_loads(text)) == typed(want)  # NaN, a lone surrogate: json's values


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    before=st.dictionaries(st.sampled_from(["a", "kind", "it"]), json_values, max_size=2),
    items=st.lists(json_values, max_size=4),
    after=st.dictionaries(st.sampled_from(["b", "metadata", "itemsx"]), json_values, max_size=2),
    indent=st.sampled_from([None, 1, "\t"]),
    cut=st.integers(0, 200),
)
def test_random_json_lists_read_item_by_item(
    before: dict[str, Any], items: list[Any], after: dict[str, Any], indent: Any, cut: int
) -> None:
    text = json.dumps({**before, "items": items, **after}, indent=indent, ensure_ascii=False)
    got = by_item(text)
    if got is None:
        # a key written with an escape ("\\u001f") might repeat another, a run of 19 digits might be
        # beyond 64 bits (orjson would make it a float): the whole text decides
        escaped_key = "\\" in text and _json_items.json_suspect(text, 100)
        assert escaped_key or _json_items.digit_run(text, 19) >= 0
    else:
        assert typed(got) == typed(json.loads(text))
    broken = text[: cut % (len(text) + 1)]  # a truncated text is invalid (or a shorter valid one)
    try:
        want = json.loads(broken)
    except json.JSONDecodeError:
        assert by_item(broken) is None
    else:
        got = by_item(broken)
        assert got is None or typed(got) == typed(want)


def test_shared_documents_keep_their_values_and_share_equal_specs() -> None:
    """Every test YAML file and its JSON List read with sharing give the same
    values as without; equal Workload specs (or pod templates) become one object."""
    for path in YAML_FILES:
        try:
            text = path.read_text(encoding="utf-8")
            plain = pyyaml_docs(text)
        except (UnicodeDecodeError, yaml.YAMLError, ValueError):
            continue
        shared = fastload.parse_yaml(text, fastload._sharing())
        if shared is not None:
            assert typed(shared) == typed(plain), path
        listed = as_json_list(text)
        assert typed(fastload._json_loads(listed, fastload._sharing())) == typed(json.loads(listed)), path
    t = requests_spec("1")
    w1, w2, w3 = wl("a", copy.deepcopy(t)), wl("b", copy.deepcopy(t)), wl("c", copy.deepcopy(t), priority=5)
    two = wl("d", copy.deepcopy(t), priority=6)
    two["spec"]["podSets"].append({"name": "b", "count": 1, "template": {"spec": copy.deepcopy(t)}})
    text = json.dumps({"kind": "List", "items": [w1, w2, w3, two]})
    got = fastload._json_loads(text, fastload._sharing())["items"]
    assert typed(got) == typed([w1, w2, w3, two])
    assert got[1]["spec"] is got[0]["spec"]
    assert got[2]["spec"] is not got[0]["spec"]  # another priority: only the template is shared
    assert template_of_raw(got[2]) is template_of_raw(got[0])
    d0, d1 = (ps["template"]["spec"] for ps in got[3]["spec"]["podSets"])
    assert d0 is template_of_raw(got[0]) and d1 is not d0  # one Workload: its own objects


def template_of_raw(w: dict[str, Any]) -> Any:
    return w["spec"]["podSets"][0]["template"]["spec"]


def test_slots_maker_builds_what_the_dataclass_builds() -> None:
    """_objects.SlotsMaker fills the slots of Workload, PodSet and Document directly
    (their __init__ does nothing more); any other class is called."""
    from dataclasses import dataclass, fields

    from kueue_fast.loader import _objects

    ps = m.PodSet("main", 2, {"cpu": 1000}, None, {}, None, [], 0, None)
    w = m.Workload(
        "ns",
        "a",
        "lq",
        [ps],
        5,
        3,
        None,
        "u",
        True,
        None,
        None,
        False,
        None,
        False,
        "",
        None,
        0,
        None,
        [],
        False,
        {"kind": "Workload"},
        None,
    )
    doc = fastload.Document("f.yaml", 1, {"kind": "List"}, 2)
    for obj in (ps, w, doc):
        cls = type(obj)
        maker = _objects.SlotsMaker(cls)
        assert maker.direct
        values = [getattr(obj, f.name) for f in fields(cls)]
        made = maker(*values)
        assert type(made) is cls and made == obj
        assert all(getattr(made, f.name) is getattr(obj, f.name) for f in fields(cls))
    with pytest.raises(TypeError):
        _objects.SlotsMaker(m.PodSet)("main", 2)

    @dataclass
    class Plain:  # no slots: called
        a: int
        b: list[int]

        def __post_init__(self) -> None:
            self.b.append(self.a)

    maker = _objects.SlotsMaker(Plain)
    assert not maker.direct
    assert maker(1, []) == Plain(1, [])


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="0123456789/:a é\U0001f600", max_size=60), length=st.integers(1, 20))
def test_digit_run_finds_the_first_run_of_ascii_digits(text: str, length: int) -> None:
    import re

    found = re.search(f"[0-9]{{{length}}}", text)
    assert _json_items.digit_run(text, length) == (found.start() if found else -1)


def test_block_yaml_reader_passes_each_document_as_it_is_read() -> None:
    seen: list[Any] = []
    docs = _yaml_block.load_all("a: 1\n---\n--- 3\n---\n- x\n", seen.append)
    assert docs == [{"a": 1}, None, 3, ["x"]]
    assert seen == [{"a": 1}, ["x"]]


# --- Workloads: bulk path against parse_workload ---------------------------------------------

B1 = "kueue.x-k8s.io/v1beta1"
B2 = "kueue.x-k8s.io/v1beta2"


def pick(draw: Any, good: list[Any], bad: list[Any] | None = None) -> Any:
    """One of ``good``; now and then (1 in 16) one of ``bad``, mostly invalid.
    (7, not 0: Hypothesis favours the ends of a range.)"""
    if bad and draw(st.integers(0, 15)) == 7:
        return draw(st.sampled_from(bad))
    return draw(st.sampled_from(good))


@st.composite
def quantities(draw: Any) -> Any:
    return pick(draw, ["1", "500m", "2", "1Gi", "512Mi", 1, 2, 1.0, 0.5, "1e3"], ["-1", "x", True, None])


@st.composite
def resources(draw: Any) -> str:
    return str(pick(draw, ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi"], ["pods"]))


resource_lists = st.dictionaries(resources(), quantities(), max_size=3)


@st.composite
def containers(draw: Any, init: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": draw(st.sampled_from(["c", "d"])), "image": "busybox"}
    if draw(st.booleans()):
        res: dict[str, Any] = {}
        if draw(st.booleans()):
            res["requests"] = draw(resource_lists)
        if draw(st.booleans()):
            res["limits"] = draw(resource_lists)
        c["resources"] = res
    if init and draw(st.booleans()):
        c["restartPolicy"] = pick(draw, ["Always", "OnFailure"], [3])
    return c


@st.composite
def templates(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(containers(), min_size=0, max_size=2))}
    if draw(st.integers(0, 3)) == 0:
        spec["initContainers"] = draw(st.lists(containers(init=True), min_size=1, max_size=2))
    if draw(st.integers(0, 4)) == 0:
        spec["overhead"] = draw(resource_lists)
    if draw(st.integers(0, 4)) == 0:
        spec["resources"] = {"requests": draw(resource_lists)}
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = pick(draw, [{"zone": "a"}, {}], [{"zone": 1}])
    if draw(st.integers(0, 3)) == 0:
        spec["tolerations"] = [{"key": "k", "operator": pick(draw, ["Exists", "Equal"], [5])}]
    if draw(st.integers(0, 4)) == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": pick(draw, ["In"], ["Bad"]), "values": ["a"]}
                            ]
                        }
                    ]
                }
            }
        }
    return spec


TIMES = [
    None,
    "2025-01-06T00:00:00Z",
    "2025-01-06T23:59:59Z",
    "2024-02-29T12:00:00Z",
    "2025-01-06T00:00:00.5Z",
    "2025-01-06T01:00:00+01:00",
]
BAD_TIMES = [
    "2025-02-29T12:00:00Z",
    "2025-01-06T24:00:00Z",
    "2025-01-06T00:60:00Z",
    "2025-13-01T00:00:00Z",
    "２０２５-01-06T00:00:00Z",
    "2025-01-06 00:00:00Z",
    "yesterday",
    5,
]


@st.composite
def workloads(draw: Any, template_pool: list[dict[str, Any]]) -> dict[str, Any]:
    api = draw(st.sampled_from([B1, B2]))
    md: dict[str, Any] = {"name": pick(draw, ["wl-a", "wl-b", "wl-c", "wl.x"], ["WL", ""])}
    ns = pick(draw, ["team-a", "team-b", None, ""], ["Team", 7])
    if ns is not None:
        md["namespace"] = ns
    ts = pick(draw, TIMES, BAD_TIMES)
    if ts is not None:
        md["creationTimestamp"] = ts
    if draw(st.integers(0, 4)) == 0:
        md["uid"] = pick(draw, ["u-1", ""], [5])
    if draw(st.integers(0, 5)) == 0:
        md["labels"] = pick(draw, [{"a": "b"}], [{"a": "-bad-"}])
    pod_sets = []
    for k in range(draw(st.integers(1, 3))):
        ps: dict[str, Any] = {}
        name = pick(
            draw,
            [["main", None, ""][draw(st.integers(0, 2))] if k == 0 else f"worker-{k}"],
            ["Bad_Name", "main"],
        )
        if name is not None:
            ps["name"] = name
        if draw(st.integers(0, 5)):
            ps["count"] = pick(draw, [1, 2, 4, 0], [-1, 2.0, True, "3"])
        if draw(st.integers(0, 4)) == 0:
            ps["minCount"] = pick(draw, [1], [2, 5, 0])
        # templates are shared between workloads so that the cache is hit; a
        # deep copy so that only values, not identities, are shared
        ps["template"] = {"spec": copy.deepcopy(draw(st.sampled_from(template_pool)))}
        pod_sets.append(ps)
    spec: dict[str, Any] = {"queueName": pick(draw, ["lq", ""], ["LQ"]), "podSets": pod_sets}
    choice = draw(st.integers(0, 6))
    if choice == 1:
        spec["priority"] = pick(draw, [10, -5], [2**31, 1.0, True])
    elif choice == 2 and api == B1:
        spec["priorityClassName"] = pick(draw, ["high"], ["missing"])
        if draw(st.booleans()):
            spec["priorityClassSource"] = pick(
                draw, ["kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass"], ["x"]
            )
    elif choice == 2:
        kind = draw(st.sampled_from(["WorkloadPriorityClass", "PriorityClass"]))
        group = "kueue.x-k8s.io" if kind == "WorkloadPriorityClass" else "scheduling.k8s.io"
        spec["priorityClassRef"] = {"group": group, "kind": kind, "name": pick(draw, ["high"], ["nope"])}
    elif choice == 3:
        spec["active"] = pick(draw, [False, True], ["no"])
    elif choice == 4:
        spec["maximumExecutionTimeSeconds"] = pick(draw, [60], [0])
    elif choice == 5 and draw(st.integers(0, 3)) == 0:
        spec["unknownField"] = 1
    obj: dict[str, Any] = {"apiVersion": api, "kind": "Workload", "metadata": md, "spec": spec}
    if draw(st.integers(0, 3)) == 0:
        first = pod_sets[0].get("name") or "main"
        conds = [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "r",
                "message": "",
                "lastTransitionTime": "2025-01-06T00:00:05Z",
            }
        ]
        if draw(st.booleans()):
            conds.append(
                {
                    "type": "Evicted",
                    "status": "True",
                    "reason": "PodsReadyTimeout",
                    "message": "",
                    "lastTransitionTime": "2025-01-06T00:00:09Z",
                }
            )
        status: dict[str, Any] = {"conditions": conds}
        if draw(st.integers(0, 4)) != 2:
            status["admission"] = {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {
                        "name": first,
                        "flavors": {"cpu": "default"},
                        "resourceUsage": {"cpu": pick(draw, ["2", "4"], ["3"])},
                        "count": 2,
                    }
                ],
            }
        if draw(st.booleans()):
            status["reclaimablePods"] = [{"name": first, "count": pick(draw, [0, 1], [9])}]
        obj["status"] = status
    return obj


def queues() -> list[dict[str, Any]]:
    return [
        {"apiVersion": B1, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 7,
        },
        {"apiVersion": B1, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {
            "apiVersion": B1,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "10"}]}
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": B1,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "team-a"},
            "spec": {"clusterQueue": "cq"},
        },
    ]


def outcome(objs: list[dict[str, Any]], fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """build_state's ClusterState, or the error it raises, by one path."""
    with monkeypatch.context() as mp:
        if not fast:
            for reader in (loader.build, loader.job_workloads):  # Workloads, and the Workloads of jobs
                mp.setattr(reader, "fast_workload", lambda *a, **k: None)
        try:
            return loader.build_state(copy.deepcopy(objs))
        except InputError as e:
            return (type(e).__name__, str(e))


def check_same(objs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    fast = outcome(objs, True, monkeypatch)
    plain = outcome(objs, False, monkeypatch)
    assert fast == plain
    return fast


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bulk_path_gives_the_same_state_or_error(
    data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = data.draw(st.lists(templates(), min_size=1, max_size=3))
    wls = data.draw(st.lists(workloads(pool), min_size=1, max_size=4))
    for i, w in enumerate(wls):  # distinct names unless a duplicate is meant
        if w["metadata"]["name"] == "wl-a":
            w["metadata"]["name"] = f"wl-a{i}"
    check_same(queues() + wls, monkeypatch)


def wl(name: str, template_spec: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": B1,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {
            "queueName": "lq",
            "podSets": [{"name": "main", "count": 2, "template": {"spec": template_spec}}],
            **spec,
        },
    }


def requests_spec(cpu: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("1", 1),  # equal text, different types
        (1, 1.0),
        (1, True),  # True == 1 in Python, not a quantity for the API server
        (float("nan"), None),  # orjson writes both as null
        ("2", "2"),
    ],
)
def test_template_cache_tells_values_apart(first: Any, second: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    objs = [*queues(), wl("a", requests_spec(first)), wl("b", requests_spec(second))]
    check_same(objs, monkeypatch)


def test_bulk_path_is_taken_and_shares_nothing_mutable(monkeypatch: pytest.MonkeyPatch) -> None:
    tmpl = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    }
    objs = [*queues(), wl("a", copy.deepcopy(tmpl)), wl("b", copy.deepcopy(tmpl))]
    calls: list[bool] = []
    real = loader.build.fast_workload

    def spy(*a: Any, **k: Any) -> m.Workload | None:
        out = real(*a, **k)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(loader.build, "fast_workload", spy)
    state = loader.build_state(objs)
    assert calls == [True, True]
    a, b = state.workloads["team-a/a"].pod_sets[0], state.workloads["team-a/b"].pod_sets[0]
    assert a.requests == b.requests == {"cpu": 1000}
    assert a.requests is not b.requests and a.tolerations is not b.tolerations
    assert a.node_selector is objs[-2]["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"]


@pytest.mark.parametrize("fast", [True, False], ids=["bulk path", "exact path"])
def test_a_workload_keeps_its_document_not_a_copy(fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workload.raw is the input's object (build_state keeps the objects, read-only
    afterwards), as ClusterState.documents holds it: one dict per Workload, not two."""
    objs = [*queues(), wl("a", requests_spec("1"))]
    with monkeypatch.context() as mp:
        if not fast:
            mp.setattr(loader.build, "fast_workload", lambda *a, **k: None)
        state = loader.build_state(objs)
    assert state.workloads["team-a/a"].raw is objs[-1] is state.documents[-1]


# Edge cases of the C check of DNS-1123 names (_bulk._plain_dns1123): what it
# declines, api/validation.py decides (a final newline included: invalid, as in Go).
NAMES = [
    "a",
    "a-b",
    "a.b",
    "a-",
    "-a",
    "a..b",
    "a.-b",
    "a-.b",
    "a.b-",
    ".a",
    "a.",
    "a\n",
    "\u00e4",
    "A",
    "a_b",
]
NAMES += ["a" * 63, "a" * 64, "a" * 253, "a" * 254, ".".join(["a" * 63] * 4)]


@pytest.mark.parametrize("name", NAMES, ids=repr)
def test_names_are_checked_as_validation_checks_them(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for field in ("name", "namespace", "queueName", "podSet"):
        w = wl("a", requests_spec("1"))
        if field == "podSet":
            w["spec"]["podSets"][0]["name"] = name
        elif field == "queueName":
            w["spec"]["queueName"] = name
        else:
            w["metadata"][field] = name
        check_same([*queues(), w], monkeypatch)


def template_of(state: m.ClusterState, key: str) -> Any:
    return state.workloads[key].raw["spec"]["podSets"][0]["template"]["spec"]


def test_equal_templates_are_one_object_and_keep_their_values() -> None:
    """Pod sets of equal templates share the first one (memory); templates
    that differ only in a JSON type, a zero's sign or their key order do not."""
    tmpl = {
        "containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1"}}, "ports": [{"containerPort": 0.0}]}
        ]
    }
    variants = {
        "same": copy.deepcopy(tmpl),
        "minus-zero": {"containers": [{**tmpl["containers"][0], "ports": [{"containerPort": -0.0}]}]},
        "int": {"containers": [{**tmpl["containers"][0], "ports": [{"containerPort": 0}]}]},
        "order": {"containers": [{"ports": [{"containerPort": 0.0}], **tmpl["containers"][0]}]},
    }
    # more distinct templates in between than _bulk compares first (the exact key finds them)
    others = [wl(f"o{i}", requests_spec(str(i + 2))) for i in range(12)]
    objs = [*queues(), wl("first", tmpl), *others, *(wl(k, t) for k, t in variants.items())]
    want = copy.deepcopy(objs)
    state = loader.build_state(objs)
    first = template_of(state, "team-a/first")
    assert template_of(state, "team-a/same") is first
    for k in ("minus-zero", "int", "order"):
        assert template_of(state, f"team-a/{k}") is not first
    assert typed(state.documents) == typed(want)  # values and types as given
    for w in state.workloads.values():
        assert w.pod_sets[0].template_spec is w.raw["spec"]["podSets"][0]["template"]["spec"]
    again = [*queues(), wl("x", requests_spec("2")), wl("y", requests_spec("2"))]
    state = loader.build_state(again + [wl(f"o{i}", requests_spec(str(i + 2))) for i in range(12)])
    assert template_of(state, "team-a/o0") is template_of(state, "team-a/x")


def test_pod_sets_of_one_workload_keep_their_own_templates() -> None:
    """Equal templates are shared across Workloads, never between the pod sets
    of one Workload: ``--output yaml`` deep-copies each document, and PyYAML
    writes an object met twice in one document as an anchor and an alias."""
    from kueue_fast.cluster.cluster import Cluster
    from kueue_fast.commands.schedule_output import to_yaml

    two = wl("two", requests_spec("1"))
    two["spec"]["podSets"].append({"name": "b", "count": 1, "template": {"spec": requests_spec("1")}})
    objs = [*queues(), wl("one", requests_spec("1")), two]
    state = loader.build_state(objs)
    a, b = (ps["template"]["spec"] for ps in state.workloads["team-a/two"].raw["spec"]["podSets"])
    assert a == b and a is not b
    assert a is template_of(state, "team-a/one")
    text = to_yaml(Cluster(state))
    assert "&id" not in text and "*id" not in text


def test_kubectl_list_of_admitted_workloads_v1beta2(monkeypatch: pytest.MonkeyPatch) -> None:
    items = []
    for i in range(3):
        w = wl(f"w{i}", requests_spec("1"))
        w["apiVersion"] = B2
        w["metadata"]["creationTimestamp"] = f"2025-01-06T00:00:0{i}Z"
        w["status"] = {
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "r",
                    "message": "",
                    "lastTransitionTime": "2025-01-06T00:01:00Z",
                }
            ],
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "2"}, "count": 2}
                ],
            },
        }
        items.append(w)
    state = check_same([*queues(), {"apiVersion": "v1", "kind": "List", "items": items}], monkeypatch)
    assert isinstance(state, m.ClusterState)
    assert state.workloads["team-a/w1"].admission_ns == state.workloads["team-a/w1"].creation_ns + 59 * 10**9


# --- compiler ----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cached_scheduling_hash_is_scheduling_hash(
    data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = data.draw(st.lists(templates(), min_size=1, max_size=3))
    wls = data.draw(st.lists(workloads(pool), min_size=1, max_size=6))
    for i, w in enumerate(wls):
        w["metadata"]["name"] = f"w{i}"
    state = outcome(queues() + wls, True, monkeypatch)
    if not isinstance(state, m.ClusterState):
        return
    topo = compile_topology(state)
    compiler = WorkloadCompiler(state, topo)
    ignore = topo.gates.scheduling_equivalence_hashing_ignore_pod_set_name
    for w in state.workloads.values():
        spec = compiler.compile(w)
        counts = [ps.count for ps in spec.pod_sets]
        assert spec.scheduling_hash == scheduling_hash(w, counts, ignore)


def test_scheduling_hash_cache_tells_types_apart() -> None:
    def workload(name: str, cpu: Any) -> m.Workload:
        raw = wl(name, requests_spec(cpu))
        ps = m.PodSet("main", 2, {"cpu": 1000})
        return m.Workload("team-a", name, "lq", [ps], 0, raw=raw)

    state = m.ClusterState()
    state.workloads = {
        "team-a/a": workload("a", 1),
        "team-a/b": workload("b", True),
        "team-a/c": workload("c", float("nan")),
        "team-a/d": workload("d", None),
    }
    compiler = WorkloadCompiler(state, compile_topology(state))
    for w in state.workloads.values():
        assert compiler.compile(w).scheduling_hash == scheduling_hash(w, [2], False)


@pytest.mark.parametrize(
    "request_",
    [
        {"required": "kubernetes.io/hostname"},
        {"preferred": "rack"},
        {"unconstrained": True},
        {"required": "rack", "podSetSliceRequiredTopology": "host", "podSetSliceSize": 2},
    ],
)
def test_a_topology_request_takes_the_bulk_path(
    request_: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod set with a valid topologyRequest (TAS) is read by the bulk path too,
    to the same state; its pod set carries no template_spec, so the engine's
    arrays never key it by its template alone (engine/_pending.pyx)."""
    objs = [*queues(), wl("a", requests_spec("1")), wl("b", requests_spec("1"))]
    objs[-1]["spec"]["podSets"][0]["topologyRequest"] = request_
    calls: list[bool] = []
    real = loader.build.fast_workload

    def spy(*a: Any, **k: Any) -> m.Workload | None:
        out = real(*a, **k)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(loader.build, "fast_workload", spy)
    state = loader.build_state(copy.deepcopy(objs))
    assert calls == [True, True]
    ps = state.workloads["team-a/b"].pod_sets[0]
    assert ps.topology_request is not None and ps.template_spec is None
    monkeypatch.undo()
    check_same(objs, monkeypatch)


@pytest.mark.parametrize(
    "request_",
    [
        {"required": "rack", "podSetSliceSize": 2},  # a slice size without its topology
        {"podSetGroupName": "g"},  # not modelled
        {"required": 3},
        {"unknown": "x"},
        "rack",
    ],
)
def test_an_invalid_topology_request_gives_the_exact_paths_error(
    request_: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    objs = [*queues(), wl("a", requests_spec("1"))]
    objs[-1]["spec"]["podSets"][0]["topologyRequest"] = request_
    check_same(objs, monkeypatch)
