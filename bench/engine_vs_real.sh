#!/usr/bin/env bash
# The engine against the real device: calibrates a loop device over a file in /dev/shm
# (blkbench calibrate), then runs one held-out matrix — rw {randwrite, randread} 4k x
# scheduler {none, mq-deadline, kyber, bfq} x iodepth {1, 32} x numjobs {1, 2} — on the
# device (blkbench run) and on its calibrated sim:ssd twin (blkbench sim), and prints a
# Markdown table for docs/engine-vs-real.md: per cell the real and twin IOPS (median of
# the repeats), the error, each one's ratio to none, and the job CPU per I/O of both.
# Needs root (losetup, blkbench run), python3.
#
# usage: bench/engine_vs_real.sh [BUILD_DIR]   (default build)
# env:   RUNTIME_MS=2000 (per held-out run)  REPEATS=3  CAL_RUNTIME_MS=1000  SIZE_MB=1024
#        KEEP=DIR (keep the preset, matrices and CSVs there)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/cli/blkbench
RUNTIME_MS=${RUNTIME_MS:-2000}
REPEATS=${REPEATS:-3}
CAL_RUNTIME_MS=${CAL_RUNTIME_MS:-1000}
SIZE_MB=${SIZE_MB:-1024}

for tool in losetup fallocate python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "build $BIN first (ninja -C $BUILD blkbench)" >&2; exit 2; }

BACKING=/dev/shm/blkbench-engine-vs-real-$$.img
WORK=$(mktemp -d)
LOOP=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -f "$BACKING"
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
# Allocated, not sparse: a write to a hole of a tmpfs file allocates and zeroes a page,
# which a device already written does not do.
fallocate -l "${SIZE_MB}M" "$BACKING"
LOOP=$(losetup -f --show "$BACKING")
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

"$BIN" calibrate "$LOOP" --out "$WORK/twin.yaml" --runtime_ms "$CAL_RUNTIME_MS" \
  --state-dir "$WORK/state" -q >"$WORK/calibrate.txt"

cat >"$WORK/held-out.yaml" <<EOF
name: engine-vs-real
repeats: $REPEATS
job: {bs: 4k, direct: 1, ioengine: io_uring, runtime: ${RUNTIME_MS}ms, ramp_time: 500ms, time_based: 1}
matrix:
  rw: [randwrite, randread]
  scheduler: [none, mq-deadline, kyber, bfq]
  iodepth: [1, 32]
  numjobs: [1, 2]
EOF
{ cat "$WORK/held-out.yaml"; echo "target: {device_class: loop}"; } >"$WORK/real.yaml"
{ cat "$WORK/held-out.yaml"; sed -n '/^target:/,$p' "$WORK/twin.yaml"; } >"$WORK/twin-matrix.yaml"

"$BIN" run "$WORK/real.yaml" --device "$LOOP" --db "" --state-dir "$WORK/state" -q \
  --format csv >"$WORK/real.csv"
"$BIN" sim "$WORK/twin-matrix.yaml" -q --format csv >"$WORK/twin.csv"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK/real.csv" "$WORK/twin.csv" <<'EOF'
import csv, statistics, sys

def cells(path):
    """cell -> (median IOPS, median job CPU us per I/O) over the repeats."""
    runs = {}
    for r in csv.DictReader(open(path)):
        if r["state"] != "done":
            continue
        key = (r["rw"], r["scheduler"], int(r["iodepth"]), int(r["numjobs"]))
        ios = float(r["read_ios"]) + float(r["write_ios"])
        if r["runner"] == "engine":  # the engine's modelled CPU per I/O, all stages
            cpu = sum(float(v) for k, v in r.items() if k.startswith("internals.cpu_ns_per_io.") and v) / 1e3
        else:  # the job's own usr + sys
            cpu = (float(r["usr_cpu_seconds"]) + float(r["sys_cpu_seconds"])) * 1e6 / max(ios, 1)
        runs.setdefault(key, []).append((float(r["iops"]), cpu))
    return {k: (statistics.median(i for i, _ in v), statistics.median(c for _, c in v))
            for k, v in runs.items()}

real, twin = cells(sys.argv[1]), cells(sys.argv[2])
print("| rw | scheduler | iodepth | numjobs | real IOPS | twin IOPS | error | real / none | twin / none | real job CPU µs/IO | twin CPU µs/IO |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
errors, held_out = [], 0
for key in sorted(real, key=lambda k: (k[0] != "randwrite", k[2], k[3], ["none", "mq-deadline", "kyber", "bfq"].index(k[1]))):
    rw, sched, qd, nj = key
    if key not in twin:
        continue
    ri, rc = real[key]
    ti, tc = twin[key]
    none_r, none_t = real.get((rw, "none", qd, nj)), twin.get((rw, "none", qd, nj))
    # The calibration swept 4k at iodepth 1 and 32 with one job under none.
    swept = sched == "none" and nj == 1
    if not swept:
        held_out += 1
        errors.append(abs(ti / ri - 1))
    print(f"| {rw} | {sched}{' (swept)' if swept else ''} | {qd} | {nj} | {ri:,.0f} | {ti:,.0f} | "
          f"{100 * (ti / ri - 1):+.0f} % | {ri / none_r[0]:.2f} | {ti / none_t[0]:.2f} | {rc:.2f} | {tc:.2f} |")
print()
print(f"{held_out} held-out cells (not swept by calibrate): mean |error| {100 * statistics.mean(errors):.0f} %, "
      f"median {100 * statistics.median(errors):.0f} %, max {100 * max(errors):.0f} %.")
EOF
echo
echo "calibrate (blkbench calibrate $LOOP --runtime_ms $CAL_RUNTIME_MS):"
echo '```'
cat "$WORK/calibrate.txt"
echo '```'
echo
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)," \
  "loop device over a ${SIZE_MB} MiB allocated file in /dev/shm (buffered), held-out runs ${RUNTIME_MS} ms" \
  "after 500 ms ramp, median of $REPEATS; load average $load_before before, $load_after after; $(date -u +%F)."
