"""The fuzzer's own machinery (tests/fuzz): cases are reproducible, the
oracle catches each kind of failure it is there for, the known list names
real mutators, and a few seeded cases pass. The bounded campaign itself runs
in .ci/run (python -m tests.fuzz)."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest
from fuzz import api, known, mutate, run
from fuzz.__main__ import load_corpus, main as fuzz_main

SCENARIOS = str(Path(__file__).parent / "scenarios" / "*.yaml")


def test_a_case_is_made_again_from_its_seed_and_index() -> None:
    corpus = load_corpus([SCENARIOS])
    a = [mutate.make_case(random.Random(f"7:{i}"), corpus, mutate.ALL_MUTATORS) for i in range(30)]
    b = [mutate.make_case(random.Random(f"7:{i}"), corpus, mutate.ALL_MUTATORS) for i in range(30)]
    assert [(c.name, c.data, c.mutators) for c in a] == [(c.name, c.data, c.mutators) for c in b]
    assert len({c.data for c in a}) > 20  # and they differ from each other


def test_a_mutator_copies_what_deep_nest_made() -> None:
    """Seed 1 of the CI campaign met this: swap-values copied a value 6,000
    lists deep, past Python's recursion limit, in the fuzzer itself."""
    corpus = load_corpus([SCENARIOS])
    enabled = {"deep-nest", "swap-values"}
    made = [mutate.make_case(random.Random(f"deep:{i}"), corpus, enabled) for i in range(40)]
    assert any("deep-nest" in c.mutators and "swap-values" in c.mutators for c in made)


def test_a_traceback_is_a_crash() -> None:
    def boom() -> int:
        raise AttributeError("'NoneType' object has no attribute 'x'")

    r = run.in_child(boom)
    assert r.rc == 70 and b"Traceback" in r.stderr
    assert (run.judge(r, "f.yaml") or "").startswith("crash:")


def test_too_much_memory_is_caught() -> None:
    def hog() -> int:
        chunks = [bytearray(64 << 20) for _ in range(64)]  # 4 GiB, past the limit
        return len(chunks)

    r = run.in_child(hog, memory=256 << 20)
    assert (run.judge(r, "f.yaml", memory=256 << 20) or "").startswith("memory:")


def test_a_hang_is_a_timeout() -> None:
    def hang() -> int:
        time.sleep(60)
        return 0

    r = run.in_child(hang, timeout=1)
    assert (run.judge(r, "f.yaml") or "").startswith("timeout:")


@pytest.mark.parametrize(
    ("stderr", "rc", "want"),
    [
        (b"error: f.yaml (document 1): ClusterQueue/cq spec.cohort: Invalid value\n", 2, None),
        (b"warning: f.yaml (document 2): ConfigMap/c: skipped\n", 0, None),
        (b"error: something went wrong\n", 2, "bad-error: the file is not named"),
        (b"error: f.yaml: 'NoneType' object has no attribute 'get'\n", 2, "bad-error: Python's words"),
        (b"oops\n", 0, "bad-error: a line that is neither"),
        (b"", 2, "bad-error: exit 2 without an error line"),
        (b"", 1, "crash: exit 1"),
        (b"", -11, "signal: SIGSEGV"),
    ],
)
def test_the_oracle(stderr: bytes, rc: int, want: str | None) -> None:
    got = run.judge(run.Run(rc, b"", stderr, 0), "f.yaml")
    assert (got is None) if want is None else (got or "").startswith(want), got


def test_engines_must_agree() -> None:
    a = run.Run(0, b'{"admitted": 1}', b"", 0)
    assert run.compare(a, run.Run(0, b'{"admitted": 1}', b"", 0)) is None
    assert (run.compare(a, run.Run(0, b'{"admitted": 2}', b"", 0)) or "").startswith("differ: stdout")
    assert (run.compare(a, run.Run(2, b"", b"error: x\n", 0)) or "").startswith("differ: exit")


def test_api_records_must_agree_and_errors_be_typed() -> None:
    ok = [("run_cycle", False, "ok", [])]
    assert api.judge(ok, ok) is None
    untyped = [("key_of", False, "untyped-error", "IndexError: list index out of range")]
    assert (api.judge(untyped, untyped) or "").startswith("api: key_of raised")
    bad_args = [("key_of", True, "ok", "a/b")]
    assert (api.judge(bad_args, [("key_of", True, "ok", "c/d")]) or "").startswith("api-arguments:")


def test_known_classes_name_real_mutators() -> None:
    for name, k in known.KNOWN.items():
        assert k.item.startswith("issue "), name
        assert set(k.mutators) <= mutate.ALL_MUTATORS, name
        assert k.mutators or k.signature, f"{name} neither skips nor recognizes anything"
    table = {"int64-format": known.Known("issue 21 item 10", signature=r"outside the int64 range")}
    outcome = "crash: exit 70; ValueError: 9223372036854775808 is outside the int64 range"
    assert known.classify(outcome, table) == "int64-format"
    assert known.classify("crash: exit 70; KeyError: 'x'", table) is None


def test_a_few_seeded_cases_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = fuzz_main(["--seed", "5", "--cases", "12", "--out", str(tmp_path), "--corpus", SCENARIOS])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1].startswith("fuzz: 12 passed, 0 failed")


def test_runs_as_a_module() -> None:
    import subprocess

    root = Path(__file__).parent.parent
    p = subprocess.run(
        [sys.executable, "-m", "tests.fuzz", "--help"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0 and "--replay" in p.stdout
