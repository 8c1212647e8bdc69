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
work=$(mktemp -d)
cd "$work" || exit 2  # outside the tree: the installed package, not the sources
# A scenario file is its Scenario header then the cluster's objects: the
# objects go to `schedule` on standard input (no path in any message), run as
# the header says (--cycles N or --until-stable).
for f in "$root"/tests/scenarios/*.yaml; do
  run=$(python3 - "$f" "$work/objects.yaml" <<'PY'
import sys, yaml
header, *objects = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
yaml.safe_dump_all(objects, open(sys.argv[2], "w"), sort_keys=False)
run = header.get("run") or {}
print(f"--cycles {run['cycles']}" if "cycles" in run else "--until-stable")
PY
)
  for e in native reference; do
    for o in json yaml table; do
      # shellcheck disable=SC2086
      echo "$(basename "$f") $e $o $(kueue-fast schedule --engine $e -o $o $run - < objects.yaml 2>&1 | h)" >> "$out"
    done
  done
done
cd "$root/tests/bad_inputs" || exit 2  # relative names: no checkout path in the messages
for b in *; do
  echo "bad $b $( (kueue-fast schedule "$b" 2>&1; echo "rc=$?") | h)" >> "$out"
done
cd "$root/examples/ml-platform" || exit 2
# what-if outputs on examples/ml-platform: small runs, both engines; the
# wall-clock figures they print are masked
mask() {  # wall and CPU times, process ids; simulated durations stay
  sed -E 's/pid [0-9]+/pid N/g; s/[0-9.]+ ?s  pid/T  pid/g; s/[0-9.]+ s \(cpu +[0-9.]+ s\)/T/g;
    s/simulated in [0-9.]+ ?(ms|s|m|h)/simulated in T/g; s/"([a-z_]*_s)": [0-9.e+-]+/"\1": T/g'
}
set_q='ClusterQueue/training.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=128'
for e in native reference; do
  for o in json table; do
    echo "simulate $e $o $(kueue-fast simulate cluster.yaml jobs.yaml -n 600 --seed 3 --days 1 \
      --engine $e --no-progress -o $o 2>&1 | mask | h)" >> "$out"
  done
done
echo "compare $(kueue-fast compare cluster.yaml --set "$set_q" -n 600 --seed 3 --days 1 --no-report \
  --no-progress --workers 1 2>&1 | mask | h)" >> "$out"
echo "sweep $(kueue-fast sweep cluster.yaml sweep.yaml -n 600 --seed 3 --days 1 --no-report \
  --no-progress --workers 1 2>&1 | mask | h)" >> "$out"
cd "$root/examples" || exit 2
for d in */; do
  echo "lint $d $( (kueue-fast lint -R "$d" 2>&1; echo "rc=$?") | h)" >> "$out"
done
cd "$work" || exit 2
for d in "$@"; do
  for e in native reference; do
    for o in json yaml table summary; do
      echo "cluster $d $e $o $(kueue-fast schedule --engine $e -R "$d" --until-stable -o $o 2>&1 | h)" >> "$out"
    done
  done
done
wc -l < "$out"
