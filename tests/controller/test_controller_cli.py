"""`kueue-fast controller` and `kueue-fast manifests` as an operator meets
them: bad configuration is one line and exit status 2."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from kueue_fast.commands.cli import main

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


@pytest.fixture
def unreached_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad flags are refused before the controller starts: starting fails the test at once."""
    from kueue_fast.controller.reconciler import Controller

    def start(self: object) -> None:
        raise AssertionError("the flags were accepted: the controller started")

    monkeypatch.setattr(Controller, "start", start)


# ports of their own: the defaults may be taken on a shared machine
FREE_PORTS = ["--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0"]


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


def test_without_the_controller_extra(
    no_cluster_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # as if not installed
    line = one_line_error(capsys, ["controller", "--kubeconfig", "/nonexistent"])
    assert "kueue-fast[controller]" in line


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--lease-namespace", "Not_A_Namespace"], "--lease-namespace"),
        (["--lease-name", "bad name"], "--lease-name"),
        (["--qps", "0"], "--qps"),
        (["--qps", "nan"], "--qps"),
        (["--qps", "inf"], "--qps"),
        (["--burst", "0"], "--burst"),
        (["--events-qps", "nan"], "--events-qps"),
        (["--events-burst", "-1"], "--events-burst"),
        (["--workers", "0"], "--workers"),
        (["--workers", "100000"], "--workers"),
        (["--status-interval", "0"], "--status-interval"),
        (["--status-interval", "-1"], "--status-interval"),
        (["--status-interval", "nan"], "--status-interval"),
        (["--status-interval", "inf"], "--status-interval"),
        (["--identity", ""], "--identity"),
        (["--identity", "a\nb"], "--identity"),
        (["--metrics-bind-address", "foo"], "--metrics-bind-address"),
        (["--metrics-bind-address", ":99999"], "--metrics-bind-address"),
        (["--metrics-bind-address", ":http"], "--metrics-bind-address"),
        (["--metrics-bind-address", "::1:8080"], "--metrics-bind-address"),
        (["--metrics-bind-address", "[::1:8080"], "--metrics-bind-address"),
        # TEST-NET-1 (RFC 5737): an address of no interface of this host
        (["--metrics-bind-address", "192.0.2.1:8080"], "--metrics-bind-address"),
        (["--metrics-bind-address", "no-such-host.invalid:8080"], "--metrics-bind-address"),
        (["--health-probe-bind-address", "foo"], "--health-probe-bind-address"),
        (["--metrics-secure", "--metrics-cert-dir", "/nonexistent"], "--metrics-cert-dir"),
        (["--config", "/nonexistent.yaml"], "/nonexistent.yaml"),
    ],
)
def test_bad_flags_are_one_line(
    no_cluster_env: Path,
    unreached_cluster: None,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    named: str,
) -> None:
    kc = no_cluster_env / "kc"
    kc.write_text(GOOD_KUBECONFIG)
    line = one_line_error(capsys, ["controller", "--kubeconfig", str(kc), *FREE_PORTS, *flags])
    assert named in line


@pytest.mark.parametrize("flag", ["--metrics-bind-address", "--health-probe-bind-address"])
def test_a_port_in_use_is_one_line(
    no_cluster_env: Path, unreached_cluster: None, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    kc = no_cluster_env / "kc"
    kc.write_text(GOOD_KUBECONFIG)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        argv = ["controller", "--kubeconfig", str(kc), *FREE_PORTS, flag, f"127.0.0.1:{port}"]
        line = one_line_error(capsys, argv)
    assert flag in line and f"127.0.0.1:{port}" in line and "in use" in line


@pytest.mark.parametrize(
    ("address", "want"),
    [
        (":8080", ("", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("[::1]:8080", ("::1", 8080)),
        ("[::]:8443", ("::", 8443)),
        ("localhost:9090", ("localhost", 9090)),
    ],
)
def test_bind_addresses_as_go_splits_them(address: str, want: tuple[str, int]) -> None:
    from kueue_fast.controller.serving import parse_address

    assert parse_address(address) == want


def test_an_ipv6_loopback_address_is_served() -> None:
    from kueue_fast.controller.serving import listen

    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback on this host")
    with listen("[::1]:0") as sock:
        assert sock.family == socket.AF_INET6 and sock.getsockname()[0] == "::1"


# --- the image and the deployment --------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _dockerfile_final_stage() -> list[tuple[str, str]]:
    """The instructions (keyword, arguments) of the Dockerfile's last stage."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if keyword.upper() == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword.upper(), rest.strip()))
    assert len(stages) >= 2, "a multi-stage build: the compiler stays in the build stage"
    return stages[-1]


def test_dockerfile_and_deployment_agree_on_a_non_root_user() -> None:
    from kueue_fast.commands import manifests

    final = _dockerfile_final_stage()
    users = [args for kw, args in final if kw == "USER"]
    assert users, "the runtime stage sets USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, "a numeric UID, so that the kubelet can check runAsNonRoot"
    entrypoint = [args for kw, args in final if kw == "ENTRYPOINT"]
    assert entrypoint and '"kueue-fast"' in entrypoint[-1]
    assert any(
        (kw == "COPY" and "--from=" in args) or (kw == "RUN" and "from=build" in args) for kw, args in final
    ), "the wheels come from the build stage"
    assert not any(kw == "RUN" and "g++" in args for kw, args in final), "no compiler in the runtime image"

    dep = next(d for d in manifests.deploy(image="example/kueue-fast:1") if d["kind"] == "Deployment")
    pod = dep["spec"]["template"]["spec"]
    sc = pod["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == int(uid)
    if gid:
        assert sc["runAsGroup"] == int(gid)
    container = pod["containers"][0]
    assert container["args"][0] == "controller"
    assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_dockerignore_keeps_local_state_out_of_the_build() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "build"} <= set(ignored)


def test_manifests_deploy_without_image_warns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifests", "deploy"]) == 0
    out, err = capsys.readouterr()
    assert "kind: Deployment" in out
    lines = err.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("warning: ")
        and "--image" in lines[0]
        and "Dockerfile" in lines[0]
    )
    assert main(["manifests", "deploy", "--image", "registry.example/kueue-fast:1"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "image: registry.example/kueue-fast:1" in out


def test_deployment_may_record_events_and_nothing_more() -> None:
    from kueue_fast.commands import manifests

    role = next(d for d in manifests.deploy() if d["kind"] == "ClusterRole")
    events = [r for r in role["rules"] if "events" in r["resources"]]
    assert events == [{"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]


def test_a_bad_kueue_configuration_is_one_line(
    no_cluster_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = no_cluster_env / "kc"
    kc.write_text(GOOD_KUBECONFIG)
    cfg = no_cluster_env / "config.yaml"
    cfg.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "resources:\n  transformations:\n  - {input: cpu, strategy: Drop}\n"
    )
    line = one_line_error(capsys, ["controller", "--kubeconfig", str(kc), "--config", str(cfg)])
    assert "resources.transformations[0].strategy" in line
    assert f"{cfg} (document 1): Configuration " in line  # where, as schedule says it
