"""A structure-aware mutation fuzzer for kueue-fast: `python -m tests.fuzz`.

mutate.py makes cases from the scenarios (tests/scenarios), run.py runs each
through the CLI's main() in a forked child under resource limits on both
engines and judges the outcome, api.py drives the embedding API the same
way, known.py lists the failure classes not failed on while their fixes are
pending, __main__.py is the campaign (seeded, bounded by cases and time,
with minimization of what it finds). See docs/architecture/development.md.
"""
