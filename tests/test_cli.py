"""Command-line habits: --version, -o/--output for formats, help lines with
their defaults, manifests as JSON, shell completion (bash run for real)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys

import pytest

from kueue_fast.commands.cli import build_parser, command_parser, main
from kueue_fast.commands.completion import commands, script


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    from importlib.metadata import version

    assert capsys.readouterr().out.strip() == f"kueue-fast {version('kueue-fast')}"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


OWNED = ("schedule", "manifests", "completion")  # the subcommands whose options this module defines


@pytest.mark.parametrize("name", OWNED)
def test_every_option_has_a_help_line_with_its_default(name):
    parser = _subparsers(build_parser())[name]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{name} {action.option_strings or action.dest}: no help line"
        if action.option_strings:
            assert "default" in action.help, f"{name} {action.option_strings}: help names no default"


def test_every_subcommand_has_a_help_line():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(a.dest for a in sub._choices_actions if a.help) == sorted(sub.choices)


@pytest.mark.parametrize("name", sorted(_subparsers(build_parser())))
def test_one_commands_parser_is_the_full_parsers_subparser(name):
    # `kueue-fast NAME ...` builds only NAME's options (cli.command_parser): same help, usage and values
    full = _subparsers(build_parser())[name]
    one = command_parser(name)
    assert one.format_help() == full.format_help()
    assert one.prog == full.prog
    full_defaults = {a.dest: a.default for a in full._actions}
    assert {a.dest: a.default for a in one._actions} == full_defaults
    assert one.get_default("func") is full.get_default("func")


def test_schedule_output_is_dash_o_or_double_dash_output():
    parser = _subparsers(build_parser())["schedule"]
    out = next(a for a in parser._actions if a.dest == "output")
    assert out.option_strings == ["-o", "--output"]
    assert list(out.choices) == ["json", "yaml", "table", "usage", "summary"]


def test_manifests_as_a_json_list(capsys):
    assert main(["manifests", "crds", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "List"
    assert {i["kind"] for i in doc["items"]} == {"CustomResourceDefinition"}
    assert main(["manifests", "deploy", "--output", "json", "--namespace", "batch"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert any(i["kind"] == "Deployment" and i["metadata"]["namespace"] == "batch" for i in items)


def test_completion_knows_every_subcommand_and_the_schedule_formats():
    cmds = {c.path: c for c in commands(build_parser())}
    assert set(cmds[()].subcommands) == {
        "schedule",
        "controller",
        "manifests",
        "simulate",
        "compare",
        "sweep",
        "snapshot",
        "trace",
        "bench",
        "completion",
        "lint",
        "status",
    }
    assert cmds[("schedule",)].valued["--output"] == ["json", "yaml", "table", "usage", "summary"]
    assert cmds[("schedule",)].positional_files
    assert cmds[("trace",)].subcommands == ["generate", "convert", "record"]


BASH_CASES = [
    (["kueue-fast", "sch"], ["schedule"]),
    (["kueue-fast", "schedule", "-o", ""], ["json", "yaml", "table", "usage", "summary"]),
    (["kueue-fast", "schedule", "x.yaml", "--output", "s"], ["summary"]),
    (["kueue-fast", "schedule", "--ex"], ["--explain"]),
    (["kueue-fast", "schedule", "--engine", "n"], ["native"]),
    (["kueue-fast", "manifests", ""], ["crds", "deploy"]),
    (["kueue-fast", "trace", "gen"], ["generate"]),
    (["kueue-fast", "completion", "f"], ["fish"]),
    (["kueue-fast", "--vers"], ["--version"]),
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("words,want", BASH_CASES, ids=[" ".join(w) for w, _ in BASH_CASES])
def test_bash_completion_completes(tmp_path, words, want):
    path = tmp_path / "kf.bash"
    path.write_text(script(build_parser(), "bash"))
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        f"source {path}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
        '_kueue_fast; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    got = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert got == want


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_completes_file_names_for_files(tmp_path):
    (tmp_path / "queues.yaml").write_text("")
    path = tmp_path / "kf.bash"
    path.write_text(script(build_parser(), "bash"))
    probe = (
        f"cd {tmp_path}; source {path}; COMP_WORDS=(kueue-fast schedule que); COMP_CWORD=2; "
        '_kueue_fast; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    got = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert got == ["queues.yaml"]


def test_zsh_completion_reuses_the_bash_script():
    text = script(build_parser(), "zsh")
    assert text.startswith("#compdef kueue-fast\nautoload -U +X bashcompinit && bashcompinit\n")
    assert text.rstrip().endswith("complete -o filenames -F _kueue_fast kueue-fast")


def test_fish_completion_lines():
    lines = script(build_parser(), "fish").splitlines()
    # fish escapes a quote inside single quotes with a backslash
    assert (
        "complete -c kueue-fast -n '__fish_use_subcommand' -a schedule "
        "-d 'run Kueue\\'s scheduler on manifests and print the decisions'"
    ) in lines
    schedule_output = [line for line in lines if "-l output" in line and "from schedule'" in line]
    assert schedule_output and "-x -a 'json yaml table usage summary'" in schedule_output[0]
    generate = [line for line in lines if "from trace; and __fish_seen_subcommand_from generate" in line]
    assert any("-l output-file -r -F" in line for line in generate)
    assert any("-l output -x" in line for line in generate)  # a format, not a path


@pytest.mark.skipif(shutil.which("fish") is None, reason="no fish")
def test_fish_parses_its_completion(tmp_path):
    path = tmp_path / "kf.fish"
    path.write_text(script(build_parser(), "fish"))
    subprocess.run(["fish", "--no-execute", str(path)], check=True)


def test_completion_command_prints_the_script(capsys):
    assert main(["completion", "bash"]) == 0
    assert "complete -o filenames -F _kueue_fast kueue-fast" in capsys.readouterr().out


def test_cli_module_runs(tmp_path):
    # cwd: `-m` puts the current folder first on sys.path; from the checkout it
    # would import the source tree, without the compiled modules of the install.
    argv = [sys.executable, "-m", "kueue_fast", "--version"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("kueue-fast ")


MANIFESTS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
"""


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["lint", "-R", "{dir}"], "0 error(s), 0 warning(s)"),
        (["schedule", "-R", "{dir}", "-o", "summary"], "cq "),
        (["simulate", "-R", "{dir}", "-n", "20", "--no-report", "--no-progress", "-o", "json"], '"cq"'),
        (["trace", "generate", "-R", "{dir}", "-n", "5", "--output-file", "{dir}/../t.csv"], "5 workloads"),
        (
            [
                "compare",
                "-R",
                "{dir}",
                "--set",
                "ClusterQueue/cq.spec.queueingStrategy=StrictFIFO",
                "-n",
                "20",
                "--no-report",
                "--no-progress",
            ],
            "cq ",
        ),
    ],
    ids=["lint", "schedule", "simulate", "trace-generate", "compare"],
)
def test_every_command_that_reads_manifests_takes_dash_r(tmp_path, capsys, argv, printed):
    """-R as kubectl's: the manifests are in a subdirectory of the one named."""
    (tmp_path / "cfg" / "kueue").mkdir(parents=True)
    (tmp_path / "cfg" / "kueue" / "cluster.yaml").write_text(MANIFESTS)
    assert main([a.format(dir=tmp_path / "cfg") for a in argv]) == 0
    out = capsys.readouterr()
    assert printed in out.out + out.err


def _schedule_process(tmp_path, *args: str) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "kueue_fast", "schedule", *args]
    return subprocess.run(argv, capture_output=True, cwd=tmp_path, timeout=300)


def test_schedule_process_ends_fast_with_the_whole_output_piped(tmp_path, capsys):
    # cli.entry ends schedule with os._exit: what was written must still all reach
    # the pipe, well beyond a pipe buffer (64 KiB), and be what main() prints.
    from kueue_fast.bench import e2e_input_files

    path = e2e_input_files("long", 500, str(tmp_path))["json"]
    proc = _schedule_process(tmp_path, path, "--until-stable", "--stats")
    assert proc.returncode == 0, proc.stderr
    assert main(["schedule", path, "--until-stable"]) == 0
    want = capsys.readouterr().out.encode()
    assert len(want) > 100_000 and proc.stdout == want
    assert proc.stderr.decode().strip().splitlines()[-1].startswith('{"engine"')


def test_schedule_process_exit_status_of_bad_input(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: Q}\nspec: {}\n")
    proc = _schedule_process(tmp_path, str(bad))
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("error: ") and proc.stdout == b""


def test_schedule_process_reader_gone_is_not_an_error(tmp_path):
    # `kueue-fast schedule ... | head -1`: no traceback, no "Exception ignored" at exit
    from kueue_fast.bench import e2e_input_files

    path = e2e_input_files("drain", 500, str(tmp_path))["json"]
    argv = [sys.executable, "-m", "kueue_fast", "schedule", path, "--until-stable"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == b"{\n"
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=300) == 0
    assert err == b""


def test_main_returns_its_status_without_exiting(tmp_path, capsys):
    # the library API (main) never ends the process; only the program's entry does
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Nothing\n")
    assert main(["schedule", str(bad)]) == 2
