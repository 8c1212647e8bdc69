#!/bin/bash
# Behaviour fingerprint for a change that must not change behaviour (a
# restructuring, a speed-up): sha256 of what `kueue-fast schedule` prints on
# every scenario in tests/scenarios (both engines; json, yaml, table), of each
# tests/bad_inputs message and exit status, of `simulate`, `compare`, `sweep`
# and `lint` on examples/ (their timings masked), and of `schedule -R DIR
# --until-stable` on any extra cluster folders given. Run it before and after
# with the same kueue-fast on PATH, then: diff <(sort before) <(sort after).
#
#   bench/fingerprint.sh OUT [CLUSTER_DIR ...]
set -u
out=${1:?usage: bench/fingerprint.sh OUT [CLUSTER_DIR ...]}
shift
out=$(realpath "$out")
root=$(cd "$(dirname "$0")/.." && pwd)
: > "$out"
h() { sha256sum | cut -c1-16; }
cd "$(mktemp -d)" || exit 2  # outside the tree: the installed package, not the sources
for f in "$root"/tests/scenarios/*.yaml; do
  for e in native reference; do
    for o in json yaml table; do
      echo "$(basename "$f") $e $o $(kueue-fast schedule --engine $e -o $o "$f" 2>&1 | h)" >> "$out"
    done
  done
done
for b in "$root"/tests/bad_inputs/*; do
  echo "bad $(basename "$b") $( (kueue-fast schedule "$b" 2>&1; echo "rc=$?") | h)" >> "$out"
done
# what-if outputs on examples/ml-platform: small runs, both engines; the
# wall-clock figures they print are masked
ex="$root/examples/ml-platform"
mask() { sed -E 's/pid [0-9]+/pid N/g; s/[0-9][0-9.,]* ?(ms|us|s|m|h)( wall| CPU)?\b/T/g; s/(in|took) T/\1 T/g'; }
set_q='ClusterQueue/training.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=128'
for e in native reference; do
  for o in json table; do
    echo "simulate $e $o $(kueue-fast simulate "$ex/cluster.yaml" "$ex/jobs.yaml" -n 600 --seed 3 --days 1 \
      --engine $e --no-progress -o $o 2>&1 | mask | h)" >> "$out"
  done
done
echo "compare $(kueue-fast compare "$ex/cluster.yaml" --set "$set_q" -n 600 --seed 3 --days 1 --no-report \
  --no-progress --workers 1 2>&1 | mask | h)" >> "$out"
echo "sweep $(kueue-fast sweep "$ex/cluster.yaml" "$ex/sweep.yaml" -n 600 --seed 3 --days 1 --no-report \
  --no-progress --workers 1 2>&1 | mask | h)" >> "$out"
for d in "$root"/examples/*/; do
  echo "lint $(basename "$d") $( (kueue-fast lint -R "$d" 2>&1; echo "rc=$?") | h)" >> "$out"
done
for d in "$@"; do
  for e in native reference; do
    for o in json yaml table summary; do
      echo "cluster $d $e $o $(kueue-fast schedule --engine $e -R "$d" --until-stable -o $o 2>&1 | h)" >> "$out"
    done
  done
done
wc -l < "$out"
