"""--set, patch files and the spec diff (kueue_fast/whatif/overrides.py, diff.py)."""

from __future__ import annotations

import pytest
import yaml
from whatif_manifests import objects

from kueue_fast.api.errors import InputError
from kueue_fast.loader import Document, build_state
from kueue_fast.whatif.diff import spec_diff
from kueue_fast.whatif.overrides import (
    Variant,
    apply_changes,
    apply_setting,
    parse_path,
    parse_setting,
    read_setting,
)

GPU = "spec.resourceGroups[1].flavors[a100.large].resources[nvidia.com/gpu]"


def base() -> Variant:
    return Variant("base", [Document("cluster.yaml", i, o) for i, o in enumerate(objects())])


def obj(v: Variant, kind: str, name: str) -> dict:
    return next(d.obj for d in v.documents if d.obj["kind"] == kind and d.obj["metadata"]["name"] == name)


def gpu_quota(v: Variant, cq: str = "team-a") -> object:
    return obj(v, "ClusterQueue", cq)["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0][
        "nominalQuota"
    ]


@pytest.mark.parametrize(
    "text, want",
    [
        ("spec.stopPolicy", ["spec", "stopPolicy"]),
        (
            "spec.resourceGroups[1].flavors[a100.large].x",
            ["spec", "resourceGroups", "[1]", "flavors", "[a100.large]", "x"],
        ),
        ("metadata.labels[kueue.x-k8s.io/team]", ["metadata", "labels", "[kueue.x-k8s.io/team]"]),
        ("spec.resourceGroups[*].flavors[*]", ["spec", "resourceGroups", "[*]", "flavors", "[*]"]),
    ],
)
def test_paths_read_keys_indexes_names_and_stars(text, want):
    assert [str(s) for s in parse_path(text)] == want


@pytest.mark.parametrize("text", ["", "spec.", ".spec", "spec..x", "spec[", "spec[]", "spec[0]x"])
def test_malformed_paths_are_refused(text):
    with pytest.raises(ValueError):
        parse_path(text)


def test_set_a_quota_by_flavor_name_with_dots_in_it():
    v = apply_changes(
        base(),
        [
            "clusterqueue/team-a.spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu].nominalQuota=16"
        ],
        [],
    )
    assert gpu_quota(v) == 16
    assert gpu_quota(v, "team-b") == "4"
    assert gpu_quota(base()) == "4"  # the base is not touched
    assert v.changes == [
        "ClusterQueue/team-a spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu]"
        ".nominalQuota=16"
    ]
    build_state(v.documents)  # still valid


def test_set_creates_maps_on_the_way_and_null_removes():
    v = apply_changes(base(), ["cq/team-a.spec.fairSharing.weight=2", "cq/team-a.spec.preemption=null"], [])
    spec = obj(v, "ClusterQueue", "team-a")["spec"]
    assert spec["fairSharing"] == {"weight": 2}
    assert "preemption" not in spec


def test_set_a_local_queue_by_namespace_and_the_configuration():
    v = apply_changes(
        base(),
        [
            "localqueue/a/default.spec.clusterQueue=team-b",
            "configuration.fairSharing={preemptionStrategies: [LessThanOrEqualToFinalShare]}",
        ],
        [],
    )
    lq = next(
        d.obj for d in v.documents if d.obj["kind"] == "LocalQueue" and d.obj["metadata"]["namespace"] == "a"
    )
    assert lq["spec"]["clusterQueue"] == "team-b"
    cfg = next(d.obj for d in v.documents if d.obj["kind"] == "Configuration")
    assert cfg["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]}
    state = build_state(v.documents)
    assert state.local_queues["a/default"].cluster_queue == "team-b"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "clusterqueue/team-z.spec.stopPolicy=Hold",
            "no ClusterQueue named 'team-z' (there are: team-a, team-b)",
        ),
        (
            "clusterqueue/team-a.spec.resourceGroups[0].flavors[spot].resources=[]",
            "no element named 'spot' (names: default)",
        ),
        ("clusterqueue/team-a.spec.resourceGroups[5].flavors=[]", "index out of range (2 elements)"),
        ("clusterqueue/team-a.spec.resourceGroups.flavors=[]", "is a list: select an element"),
        ("clusterqueue/team-a.spec.stopPolicy", "expected TARGET=VALUE"),
        ("clusterqueue/team-a.spec.stopPolicy=", "no value after '='"),
        ("queue/team-a.spec.x=1", "unknown kind 'queue'"),
        ("localqueue/default.spec.clusterQueue=x", "localqueue/NAMESPACE/NAME.PATH"),
        ("clusterqueue/team-a=1", "no field path"),
        (
            "clusterqueue/team-a.spec.resourceGroups[*].flavors[h100].resources=[]",
            "no element has flavors[h100]",
        ),
    ],
)
def test_bad_settings_are_one_line_errors_naming_the_setting(text, message):
    v = base()
    with pytest.raises(InputError) as e:
        apply_changes(v, [text], [])
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_read_setting_reads_what_set_would_change():
    v = base()
    s = parse_setting(
        "cq/team-a.spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu].nominalQuota=1",
        v.documents,
    )
    assert read_setting(v.documents, s) == "4"
    apply_setting(v.documents, s)
    assert read_setting(v.documents, s) == 1


def test_a_patch_merges_into_the_object_it_names_and_adds_new_ones(tmp_path):
    patch = tmp_path / "patch.yaml"
    patch.write_text(
        yaml.safe_dump_all(
            [
                {
                    "kind": "ClusterQueue",
                    "metadata": {"name": "team-b"},
                    "spec": {"stopPolicy": "Hold", "preemption": None},
                },
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "ResourceFlavor",
                    "metadata": {"name": "spot"},
                },
            ]
        )
    )
    v = apply_changes(base(), [], [str(patch)])
    spec = obj(v, "ClusterQueue", "team-b")["spec"]
    assert spec["stopPolicy"] == "Hold" and "preemption" not in spec and spec["cohortName"] == "research"
    assert obj(v, "ResourceFlavor", "spot")
    assert v.changes == [f"ClusterQueue/team-b patched ({patch})", f"ResourceFlavor/spot added ({patch})"]


def test_a_patch_adding_an_object_needs_its_api_version(tmp_path):
    patch = tmp_path / "patch.yaml"
    patch.write_text(yaml.safe_dump({"kind": "ResourceFlavor", "metadata": {"name": "spot"}}))
    with pytest.raises(
        InputError, match="ResourceFlavor/spot apiVersion: does not exist, and a new object needs"
    ):
        apply_changes(base(), [], [str(patch)])


def test_the_diff_names_fields_in_the_set_syntax_and_quantities_by_value():
    a = base()
    b = apply_changes(
        a,
        [
            "cq/team-a.spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu].nominalQuota=8",
            "cq/team-b.spec.resourceGroups[0].flavors[default].resources[cpu].nominalQuota=8000m",  # the same
            "cq/team-b.spec.stopPolicy=Hold",
        ],
        [],
    )
    changes = [str(c) for c in spec_diff(a.documents, b.documents)]
    assert changes == [
        f"ClusterQueue/team-a {GPU}.nominalQuota: 4 -> 8",
        "ClusterQueue/team-b spec.stopPolicy: (unset) -> Hold",
    ]
    # a path of the diff given back as --set makes the same change
    c = apply_changes(a, [f"cq/team-a.{changes[0].split(' ', 1)[1].split(':')[0]}=8"], [])
    assert not [x for x in spec_diff(b.documents, c.documents) if x.obj == "ClusterQueue/team-a"]


def test_the_diff_lists_added_and_removed_objects_and_local_queue_targets():
    a = base()
    docs = [d for d in a.documents if d.obj["metadata"]["name"] != "a100.large"]
    docs.append(
        Document(
            "x",
            0,
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "research"}},
        )
    )
    b = apply_changes(Variant("b", docs), ["lq/b/default.spec.clusterQueue=team-a"], [])
    assert [str(c) for c in spec_diff(a.documents, b.documents)] == [
        "ResourceFlavor/a100.large: removed",
        "Cohort/research: added",
        "LocalQueue/b/default spec.clusterQueue: team-b -> team-a",
    ]
