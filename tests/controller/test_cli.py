"""`kueue-fast controller` and `kueue-fast manifests` as an operator meets
them: bad configuration is one line and exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueue_fast.cli import main

GOOD_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: u}}]
current-context: one
"""


@pytest.fixture
def no_cluster_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Not in a pod, no $KUBECONFIG, an empty home."""
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_missing_kubeconfig_file_is_one_line(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line_error(capsys, ["controller", "--kubeconfig", "/nonexistent"])
    assert "/nonexistent" in line and "no such file" in line


def test_kubeconfig_that_is_not_yaml_is_one_line(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = no_cluster_env / "bad"
    bad.write_text("clusters: [\n")
    line = one_line_error(capsys, ["controller", "--kubeconfig", str(bad)])
    assert str(bad) in line


def test_kubeconfig_without_a_usable_context_is_one_line(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = no_cluster_env / "empty"
    empty.write_text("apiVersion: v1\nkind: Config\n")
    line = one_line_error(capsys, ["controller", "--kubeconfig", str(empty)])
    assert str(empty) in line


def test_unknown_context_names_the_known_ones(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = no_cluster_env / "kc"
    kc.write_text(GOOD_KUBECONFIG)
    line = one_line_error(capsys, ["controller", "--kubeconfig", str(kc), "--context", "three"])
    assert 'context "three"' in line and "one, two" in line


def test_no_configuration_at_all_says_what_to_do(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line_error(capsys, ["controller"])
    assert "--kubeconfig" in line and "KUBECONFIG" in line


def test_kubeconfig_env_naming_missing_files(
    no_cluster_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", "/nope/a:/nope/b")
    line = one_line_error(capsys, ["controller"])
    assert "/nope/a" in line and "KUBECONFIG" in line


def test_broken_in_cluster_configuration_is_one_line(
    no_cluster_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # in a pod (the service host is set) without a service account token
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    line = one_line_error(capsys, ["controller"])
    assert "in-cluster" in line


def test_python_dash_m_controller_too(no_cluster_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kueue_fast.controller.__main__ import main as module_main

    rc = module_main(["--kubeconfig", "/nonexistent"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), err


@pytest.mark.parametrize(
    "flags",
    [["--lease-namespace", "Not_A_Namespace"], ["--lease-name", "bad name"], ["--qps", "0"]],
)
def test_bad_flags_are_one_line(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    kc = no_cluster_env / "kc"
    kc.write_text(GOOD_KUBECONFIG)
    one_line_error(capsys, ["controller", "--kubeconfig", str(kc), *flags])
