"""``python -m tests.fuzz [--seed N] [--cases N] [--time S] ...``: the campaign.

Case ``i`` of seed ``s`` is made from ``random.Random(f"{s}:{i}")`` alone, so
``--replay s:i`` makes it again. Each case is a command run on both engines
(``schedule -o json|yaml|table|summary|usage [--explain]`` or ``lint``) or
an embedding-API script; a failure not in known.py is minimized (documents,
then fields, dropped while it still fails the same way) and saved under
``--out``. The last line is ``fuzz: N passed, M failed``; the exit status is
1 when anything failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# one thread per library: the children are forked from this process
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# `python -m tests.fuzz` puts the repository first on sys.path, where the
# source tree would shadow the installed package and its compiled modules
# (CI installs a wheel): fuzz what is installed, as pytest tests it.
ROOT = Path(__file__).resolve().parents[2]
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != ROOT]

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import copy  # noqa: E402
import glob  # noqa: E402
import io  # noqa: E402
import pickle  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import yaml  # noqa: E402

from . import api, known, mutate, run  # noqa: E402

ENGINES = ("native", "reference")
# structure mutators that make inputs too big for a quick API script
_API_SKIP = {"many-objects", "grow-list", "huge-string", "deep-nest", "nest"}


def load_corpus(patterns: list[str]) -> list[tuple[str, list[Any]]]:
    """The input documents of each scenario (its header, ``kind: Scenario``, left out)."""
    corpus = []
    for pattern in patterns:
        for name in sorted(glob.glob(pattern)):
            with open(name, encoding="utf-8") as f:
                docs = [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if d is not None]
            docs = [d for d in docs if not (isinstance(d, dict) and d.get("kind") == "Scenario")]
            if docs:
                corpus.append((os.path.relpath(name, ROOT), docs))
    if not corpus:
        raise SystemExit(f"error: no scenario in {patterns}")
    return corpus


def command(rng: random.Random, path: str, engine: str) -> list[str]:
    kind = rng.choices(
        ("json", "yaml", "table", "summary", "usage", "explain", "lint"), (6, 1, 1, 1, 1, 1, 1)
    )[0]
    if kind == "lint":
        return ["lint", path]
    argv = ["schedule", path, "--engine", engine, "--cycles", str(rng.choice((1, 1, 2, 3)))]
    return argv + (["-o", "json", "--explain"] if kind == "explain" else ["-o", kind])


class Campaign:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.corpus = load_corpus(args.corpus)
        self.known = {} if args.include_known else known.KNOWN
        skipped = known.skipped_mutators(self.known)
        self.enabled = mutate.ALL_MUTATORS - skipped
        self.work = Path(args.out) / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.failures: list[str] = []
        self.known_hits: dict[str, list[str]] = collections.defaultdict(list)

    # --- one case ------------------------------------------------------------------------------------

    def case(self, seed: int, i: int) -> tuple[str | None, dict[str, Any]]:
        """(what is wrong or None, what to save)."""
        rng = random.Random(f"{seed}:{i}")
        if rng.random() < self.args.api_fraction:
            return self._api_case(rng)
        c = mutate.make_case(rng, self.corpus, self.enabled)
        path = str(self.work / c.name)
        engine_rng_state = rng.getstate()
        argvs = []
        for engine in ENGINES:
            rng.setstate(engine_rng_state)  # the same command on each engine
            argvs.append(command(rng, path, engine))
        problem = self._run_cli(c.data, path, argvs)
        return problem, {"case": c, "argvs": argvs, "path": path}

    def _run_cli(self, data: bytes, path: str, argvs: list[list[str]]) -> str | None:
        with open(path, "wb") as f:
            f.write(data)
        lint = argvs[0][0] == "lint"
        if lint:  # lint has no --engine: one run is enough
            argvs = argvs[:1]
        runs = [run.in_child(run.cli(a), timeout=self.args.timeout) for a in argvs]
        for r in runs:
            problem = run.judge(r, path, lint=lint)
            if problem:
                return problem
        return None if lint else run.compare(runs[0], runs[1])

    def _api_case(self, rng: random.Random) -> tuple[str | None, dict[str, Any]]:
        c = mutate.make_case(rng, self.corpus, self.enabled - _API_SKIP - set(mutate.TEXT_MUTATORS))
        docs = c.docs if c.docs is not None else []
        calls = api.script(rng, rng.randrange(4, 16))
        return self._run_api(docs, calls), {"case": c, "calls": calls}

    def _run_api(self, docs: list[Any], calls: list[Any]) -> str | None:
        records = []
        for engine in ENGINES:

            def go(engine: str = engine) -> int:
                with contextlib.redirect_stderr(io.StringIO()):  # the engine's own warnings
                    rec = api.run_script(docs, engine, calls)
                os.write(1, pickle.dumps(rec))
                return 0

            r = run.in_child(go, timeout=self.args.timeout)
            if r.rc != 0:
                return run.judge(r, "") or f"crash: exit {r.rc}"
            records.append(pickle.loads(r.stdout))
        return api.judge(records[0], records[1])

    # --- minimizing ----------------------------------------------------------------------------------

    def minimize(self, info: dict[str, Any], problem: str) -> bytes | None:
        """A smaller input that fails the same way (same class), or None."""
        c: mutate.Case = info["case"]
        if c.docs is None or "argvs" not in info:
            return None
        cls = problem.split(":", 1)[0]
        path, argvs = info["path"], info["argvs"]
        style = c.mutators[-1]
        budget = [self.args.minimize_runs]

        def fails(docs: list[Any]) -> bool:
            if budget[0] <= 0:
                return False
            budget[0] -= 1
            try:
                data = mutate.dump(docs, style).encode()
            except (ValueError, RecursionError):
                return False
            p = self._run_cli(data, path, argvs)
            return p is not None and p.split(":", 1)[0] == cls

        docs = copy.deepcopy(c.docs)
        i = 0
        while i < len(docs) and budget[0] > 0:  # 1. whole documents
            trial = docs[:i] + docs[i + 1 :]
            if trial and fails(trial):
                docs = trial
            else:
                i += 1
        changed = True
        while changed and budget[0] > 0:  # 2. fields, the biggest first
            changed = False
            for d in range(len(docs)):
                for p in sorted(mutate.paths(docs[d]), key=len):
                    if not p or budget[0] <= 0:
                        continue
                    trial = copy.deepcopy(docs)
                    try:
                        mutate.delete(trial[d], p)
                    except (KeyError, IndexError, TypeError):
                        continue
                    if fails(trial):
                        docs, changed = trial, True
                        break
                if changed:
                    break
        return mutate.dump(docs, style).encode()

    # --- the campaign ---------------------------------------------------------------------------------

    def save(self, seed: int, i: int, info: dict[str, Any], problem: str, small: bytes | None) -> Path:
        d = Path(self.args.out) / "failures" / f"{seed}-{i}"
        d.mkdir(parents=True, exist_ok=True)
        c: mutate.Case = info["case"]
        (d / c.name).write_bytes(c.data)
        if small is not None:
            (d / f"minimized-{c.name}").write_bytes(small)
        how = info.get("argvs") or info.get("calls")
        (d / "README").write_text(
            f"replay: python -m tests.fuzz --replay {seed}:{i}\nproblem: {problem}\nmutators: {c.mutators}\n"
            f"run: {how}\n"
        )
        return d

    def run(self) -> int:
        a = self.args
        seed = a.seed
        start = time.monotonic()
        done = 0
        for i in range(a.cases):
            if a.time and time.monotonic() - start > a.time:
                break
            problem, info = self.case(seed, i)
            done += 1
            if done % 250 == 0:
                print(
                    f"... {done} cases, {dict(self.outcomes)}, {time.monotonic() - start:.0f} s", flush=True
                )
            if problem is None:
                self.outcomes["passed"] += 1
                continue
            c: mutate.Case = info["case"]
            cls = known.classify(problem, self.known)
            tagged = [m for m in c.mutators if m in known.skipped_mutators(self.known)]
            if cls is None and tagged:
                cls = next(n for n, k in self.known.items() if set(k.mutators) & set(tagged))
            if cls is not None:
                self.outcomes["known"] += 1
                self.known_hits[cls].append(f"{seed}:{i}")
                if a.verbose:
                    print(f"known {cls} {seed}:{i}: {problem[:200]}", flush=True)
                continue
            self.outcomes["failed"] += 1
            small = None if a.no_minimize else self.minimize(info, problem)
            where = self.save(seed, i, info, problem, small)
            line = f"FAIL {seed}:{i} {problem[:500]} (mutators {c.mutators}) -> {where}"
            self.failures.append(line)
            print(line, flush=True)
            if a.verbose:
                print(f"  run: {info.get('argvs') or info.get('calls')}", flush=True)
        elapsed = time.monotonic() - start
        for cls, cases in sorted(self.known_hits.items()):
            print(f"known ({self.known[cls].item}) {cls}: {len(cases)} cases, e.g. {', '.join(cases[:3])}")
        rate = done / elapsed if elapsed else 0.0
        print(f"{done} cases in {elapsed:.0f} s ({rate:.1f}/s), seed {seed}, {len(self.corpus)} scenarios")
        passed, failed, known_n = (self.outcomes[k] for k in ("passed", "failed", "known"))
        print(
            f"fuzz: {passed + known_n} passed, {failed} failed" + (f" ({known_n} known)" if known_n else "")
        )
        return 1 if self.outcomes["failed"] else 0

    def replay(self, spec: str) -> int:
        seed_s, _, i_s = spec.partition(":")
        seed, i = int(seed_s), int(i_s)
        problem, info = self.case(seed, i)
        c: mutate.Case = info["case"]
        print(f"case {seed}:{i}: mutators {c.mutators}; {info.get('argvs') or info.get('calls')}")
        print(f"input: {info.get('path', '(API)')}")
        print(f"outcome: {problem or 'ok'}")
        return 1 if problem else 0


def warm_up(corpus: list[tuple[str, list[Any]]], work: Path) -> None:
    """Import and run everything once here, so that each forked child starts warm."""
    from kueue_fast.commands.cli import main
    from kueue_fast.engine.select import native_available

    if not native_available():
        raise SystemExit("error: the native engine cannot be imported: install the package (pip install .)")

    path = work / "warm-up.yaml"
    path.write_text(mutate.dump(corpus[0][1], "block"))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for engine in ENGINES:
            main(["schedule", str(path), "--engine", engine, "-o", "json"])
            main(["schedule", str(path), "--engine", engine, "-o", "table"])
        main(["lint", str(path)])
        api.run_script(corpus[0][1], "native", [("run_cycle", (), False)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1, help="(default: 1)")
    p.add_argument("--cases", type=int, default=1000, help="at most this many cases (default: 1000)")
    p.add_argument("--time", type=float, default=0, help="stop after this many seconds (default: no limit)")
    p.add_argument("--timeout", type=int, default=run.TIMEOUT, help="seconds per run (default: %(default)s)")
    p.add_argument("--api-fraction", type=float, default=0.15, help="share of API cases (default: 0.15)")
    p.add_argument("--corpus", nargs="+", default=[str(ROOT / "tests/scenarios/*.yaml")], metavar="GLOB")
    p.add_argument(
        "--out", default=str(ROOT / "fuzz-out"), help="work files and failures (default: fuzz-out)"
    )
    p.add_argument("--include-known", action="store_true", help="draw and fail on known.py's classes too")
    p.add_argument("--no-minimize", action="store_true")
    p.add_argument(
        "--minimize-runs", type=int, default=150, help="runs spent minimizing a failure (default: 150)"
    )
    p.add_argument("--replay", metavar="SEED:INDEX", help="make and run one case, print its outcome")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    campaign = Campaign(args)
    warm_up(campaign.corpus, campaign.work)
    return campaign.replay(args.replay) if args.replay else campaign.run()


if __name__ == "__main__":
    sys.exit(main())
