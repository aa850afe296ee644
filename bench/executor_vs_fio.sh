#!/usr/bin/env bash
# Executor vs fio: the same randread job run by fio and by blkbench-exec-bench on a loop
# device over a file in /dev/shm, per row an I/O engine (io_uring, libaio, psync, and the
# no-op engine: ours `nop` against fio's `null`), depth and job count. Runs are interleaved,
# who goes first alternating (fio ours, ours fio, ...), and each cell is the median with the
# min–max range of the repeats. Prints a Markdown section (for docs/performance.md, pasted by
# hand) to stdout or to --out FILE, never into the tree; progress goes to stderr. Needs
# root (losetup), fio, jq.
#
# usage: bench/executor_vs_fio.sh [--out FILE] [BUILD_DIR]   (default BUILD_DIR: build)
# env:   RUNTIME=5 (s per run)  REPEATS=5  SIZE_MB=1024  ONLY=REGEX (rows whose label matches)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="" BUILD=$ROOT/build
while [ $# -gt 0 ]; do
  case "$1" in
    --out | -o) OUT="$2"; shift 2 ;;
    -h | --help) sed -n 2,11p "$0"; exit 0 ;;
    *) BUILD="$1"; shift ;;
  esac
done
BIN=$BUILD/agent/executor/blkbench-exec-bench
RUNTIME=${RUNTIME:-5}
REPEATS=${REPEATS:-5}
SIZE_MB=${SIZE_MB:-1024}
ONLY=${ONLY:-}

for tool in fio jq losetup /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "build $BIN first (ninja -C $BUILD blkbench-exec-bench)" >&2; exit 2; }

WORK=$(mktemp -d)
BACKING=/dev/shm/blkbench-bench-$$.img
LOOP=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -f "$BACKING"
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# Fully allocated backing file: reads hit real page-cache pages, not holes.
fallocate -l "${SIZE_MB}M" "$BACKING"
LOOP=$(losetup -f --show "$BACKING")
echo "loop device: $LOOP over $BACKING (${SIZE_MB} MiB)" >&2
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# One run of fio; prints "iops job_cpu_us_per_io proc_cpu_us_per_io".
run_fio() {  # ioengine qd numjobs extra-args...
  local engine=$1 qd=$2 nj=$3; shift 3
  /usr/bin/time -f "%U %S" -o "$WORK/time" \
    fio --name=bench --filename="$LOOP" --size="${SIZE_MB}M" --rw=randread --bs=4k --direct=1 \
      --ioengine="$engine" --iodepth="$qd" --numjobs="$nj" --runtime="$RUNTIME" \
      --time_based --norandommap --output-format=json "$@" >"$WORK/fio.json" 2>/dev/null
  # Per job: cpu% of its runtime (fio reports usr/sys from the job's rusage).
  jq -r '[ ([.jobs[].read.iops] | add),
           ([.jobs[].read.total_ios] | add),
           ([.jobs[] | (.usr_cpu + .sys_cpu) / 100 * .job_runtime * 1000] | add) ]
         | "\(.[0]) \(.[1]) \(.[2])"' "$WORK/fio.json" |
    awk -v t="$(cat "$WORK/time")" '{ split(t, c, " ");
      printf "%.0f %.3f %.3f\n", $1, $3 / $2, (c[1] + c[2]) * 1e6 / $2 }'
}

run_ours() {  # ioengine qd numjobs extra-flags...
  local engine=$1 qd=$2 nj=$3; shift 3
  /usr/bin/time -f "%U %S" -o "$WORK/time" \
    "$BIN" --filename="$LOOP" --rw=randread --bs=4096 --direct --ioengine="$engine" \
      --iodepth="$qd" --numjobs="$nj" --runtime="$RUNTIME" --norandommap "$@" >"$WORK/ours.json"
  jq -r '"\(.iops) \(.ios) \(.cpu_us_per_io)"' "$WORK/ours.json" |
    awk -v t="$(cat "$WORK/time")" '{ split(t, c, " ");
      printf "%.0f %.3f %.3f\n", $1, $3, (c[1] + c[2]) * 1e6 / $2 }'
}

# Column $1 of file $2: "median min max".
stats() {
  cut -d' ' -f"$1" "$2" | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    print m, v[1], v[NR] }'
}

BATCH16="--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16"
# label | our ioengine | fio's ioengine | iodepth | numjobs | flags both take
CONFIGS=(
  "io_uring QD1|io_uring|io_uring|1|1|"
  "io_uring QD1 pinned to CPU 1|io_uring|io_uring|1|1|--cpus_allowed=1"
  "io_uring QD32|io_uring|io_uring|32|1|"
  "io_uring QD128|io_uring|io_uring|128|1|"
  "io_uring QD1|io_uring|io_uring|1|2|"
  "io_uring QD32|io_uring|io_uring|32|2|"
  "io_uring QD32 threads|io_uring|io_uring|32|2|--thread"
  "io_uring QD128 batch 16|io_uring|io_uring|128|1|$BATCH16"
  "io_uring QD128 batch 16|io_uring|io_uring|128|2|$BATCH16"
  "libaio QD1|libaio|libaio|1|1|"
  "libaio QD32|libaio|libaio|32|1|"
  "psync QD1|psync|psync|1|1|"
  "no-op QD1|nop|null|1|1|"
  "no-op QD32|nop|null|32|1|"
  "no-op QD32|nop|null|32|2|"
  "no-op QD128 batch 16|nop|null|128|1|$BATCH16"
)

ROWS=$WORK/rows.md
: >"$ROWS"
for cfg in "${CONFIGS[@]}"; do
  IFS='|' read -r label ours fios qd nj extra <<<"$cfg"
  if [ -n "$ONLY" ] && ! [[ "$label" =~ $ONLY ]]; then continue; fi
  read -ra args <<<"$extra"
  : >"$WORK/f" && : >"$WORK/o"
  for ((r = 0; r < REPEATS; r++)); do
    # Alternate who goes first so drift (load, page cache, neighbours) hits both alike.
    if ((r % 2 == 0)); then
      run_fio "$fios" "$qd" "$nj" "${args[@]}" >>"$WORK/f"
      run_ours "$ours" "$qd" "$nj" "${args[@]}" >>"$WORK/o"
    else
      run_ours "$ours" "$qd" "$nj" "${args[@]}" >>"$WORK/o"
      run_fio "$fios" "$qd" "$nj" "${args[@]}" >>"$WORK/f"
    fi
  done
  read -r oi oi_lo oi_hi <<<"$(stats 1 "$WORK/o")"
  read -r fio_iops fio_iops_lo fio_iops_hi <<<"$(stats 1 "$WORK/f")"
  read -r oc oc_lo oc_hi <<<"$(stats 2 "$WORK/o")"
  read -r fc fc_lo fc_hi <<<"$(stats 2 "$WORK/f")"
  read -r op _ _ <<<"$(stats 3 "$WORK/o")"
  read -r fp _ _ <<<"$(stats 3 "$WORK/f")"
  engines=$ours
  [ "$ours" = "$fios" ] || engines="$ours / $fios"
  line=$(awk -v l="$label" -v e="$engines" -v nj="$nj" \
    -v oi="$oi" -v oil="$oi_lo" -v oih="$oi_hi" -v fi="$fio_iops" -v fil="$fio_iops_lo" -v fih="$fio_iops_hi" \
    -v oc="$oc" -v ocl="$oc_lo" -v och="$oc_hi" -v fc="$fc" -v fcl="$fc_lo" -v fch="$fc_hi" \
    -v op="$op" -v fp="$fp" 'BEGIN {
      printf "| %s | %s | %d | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | **%.2f** |", l, e, nj,
        oi, oil, oih, fi, fil, fih, oi / fi
      printf " %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | **%.2f** | %.2f |\n",
        oc, ocl, och, fc, fcl, fch, oc / fc, op / fp }')
  echo "$line" >>"$ROWS"
  echo "$line" >&2
  echo "  runs fio: $(tr '\n' ';' <"$WORK/f")  ours: $(tr '\n' ';' <"$WORK/o")" >&2
done

print_section() {
  echo "Job: \`rw=randread bs=4k direct=1 norandommap time_based runtime=${RUNTIME}s\` on the"
  echo "ioengine of the row, jobs as processes (fio's default) unless the row says *threads*,"
  echo "fio's default batching (iodepth_batch_submit=1, iodepth_batch_complete_min=max=1) unless"
  echo "the row says *batch 16* (submit 16, complete min 1, max 16). *no-op*: ours \`ioengine=nop\`"
  echo "against fio's \`ioengine=null\`; both complete each request without I/O, so the row is"
  echo "each framework's own ceiling. ${REPEATS} runs per tool and row, interleaved with who"
  echo "goes first alternating; each cell is the median (min–max). Target: \`$LOOP\` (loop"
  echo "device, no direct-io) over a ${SIZE_MB} MiB file in /dev/shm."
  echo
  echo "*job CPU* = usr+sys of the jobs over the measured phase as each tool reports it, per"
  echo "completed I/O. Ratios are ours / fio of the medians: above 1 is better for IOPS, below 1"
  echo "is better for CPU. *process CPU ratio*: the same for usr+sys of the whole process tree"
  echo "(\`/usr/bin/time\`: set-up, fio's main process, our sampler)."
  echo
  echo "| job | ioengine | numjobs | IOPS ours | IOPS fio | IOPS ratio | job CPU µs/IO ours | fio | CPU ratio | process CPU ratio |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  cat "$ROWS"
  echo
  echo "Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r), $(fio --version),"
  echo "liburing $(pkg-config --modversion liburing 2>/dev/null || echo '?'),"
  echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource),"
  echo "scheduler of $(basename "$LOOP"): $(sed 's/ *$//' /sys/block/"$(basename "$LOOP")"/queue/scheduler),"
  echo "load average $LOAD_START at the start and $(cut -d' ' -f1-3 /proc/loadavg) at the end."
  echo "Run on $(date -u +%Y-%m-%d) by \`RUNTIME=$RUNTIME REPEATS=$REPEATS bench/executor_vs_fio.sh\`."
}

if [ -n "$OUT" ]; then
  print_section >"$OUT"
  echo "wrote $OUT" >&2
else
  print_section
fi
