#!/usr/bin/env bash
# Executor vs fio: runs the same randread job with fio (ioengine=io_uring) and with
# blkbench-exec-bench on a loop device over a file in /dev/shm, and writes the
# "Executor vs fio" section of docs/performance.md. Needs root (losetup), fio, jq.
#
# usage: bench/executor_vs_fio.sh [BUILD_DIR]   (default /tmp/build-exec)
# env:   RUNTIME=5 (s per run)  REPEATS=5 (median of)  SIZE_MB=1024  DOC=docs/performance.md
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-/tmp/build-exec}
BIN=$BUILD/agent/executor/blkbench-exec-bench
RUNTIME=${RUNTIME:-5}
REPEATS=${REPEATS:-5}
SIZE_MB=${SIZE_MB:-1024}
DOC=${DOC:-$ROOT/docs/performance.md}

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

# One run of fio; prints "iops job_cpu_us_per_io proc_cpu_us_per_io".
run_fio() {  # qd numjobs extra-fio-args...
  local qd=$1 nj=$2; shift 2
  /usr/bin/time -f "%U %S" -o "$WORK/time" \
    fio --name=bench --filename="$LOOP" --rw=randread --bs=4k --direct=1 \
      --ioengine=io_uring --iodepth="$qd" --numjobs="$nj" --runtime="$RUNTIME" \
      --time_based --norandommap --output-format=json "$@" >"$WORK/fio.json" 2>/dev/null
  # Per job: cpu% of its runtime (fio reports usr/sys from the job's rusage).
  jq -r '[ ([.jobs[].read.iops] | add),
           ([.jobs[].read.total_ios] | add),
           ([.jobs[] | (.usr_cpu + .sys_cpu) / 100 * .job_runtime * 1000] | add) ]
         | "\(.[0]) \(.[1]) \(.[2])"' "$WORK/fio.json" |
    awk -v t="$(cat "$WORK/time")" '{ split(t, c, " ");
      printf "%.0f %.3f %.3f\n", $1, $3 / $2, (c[1] + c[2]) * 1e6 / $2 }'
}

run_ours() {  # qd numjobs extra-flags...
  local qd=$1 nj=$2; shift 2
  /usr/bin/time -f "%U %S" -o "$WORK/time" \
    "$BIN" --filename="$LOOP" --rw=randread --bs=4096 --direct --ioengine=io_uring \
      --iodepth="$qd" --numjobs="$nj" --runtime="$RUNTIME" "$@" >"$WORK/ours.json"
  jq -r '"\(.iops) \(.ios) \(.cpu_us_per_io)"' "$WORK/ours.json" |
    awk -v t="$(cat "$WORK/time")" '{ split(t, c, " ");
      printf "%.0f %.3f %.3f\n", $1, $3, (c[1] + c[2]) * 1e6 / $2 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# label | qd | numjobs | fio extra args | our extra flags
CONFIGS=(
  "QD1|1|1||"
  "QD1 pinned to CPU 1|1|1|--cpus_allowed=1|--cpus_allowed=1"
  "QD32|32|1||"
  "QD128|128|1||"
  "QD1|1|2||"
  "QD32|32|2||"
  "QD128|128|2||"
  "QD128 batch 16|128|1|--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16|--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16"
  "QD128 batch 16|128|2|--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16|--iodepth_batch_submit=16 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16"
)

ROWS=$WORK/rows.md
: >"$ROWS"
for cfg in "${CONFIGS[@]}"; do
  IFS='|' read -r label qd nj fio_extra our_extra <<<"$cfg"
  read -ra fio_args <<<"$fio_extra"
  read -ra our_args <<<"$our_extra"
  : >"$WORK/f" && : >"$WORK/o"
  for ((r = 0; r < REPEATS; r++)); do
    # Alternate who goes first so drift (thermal, page cache, neighbours) hits both.
    if ((r % 2 == 0)); then
      run_fio "$qd" "$nj" "${fio_args[@]}" >>"$WORK/f"
      run_ours "$qd" "$nj" "${our_args[@]}" >>"$WORK/o"
    else
      run_ours "$qd" "$nj" "${our_args[@]}" >>"$WORK/o"
      run_fio "$qd" "$nj" "${fio_args[@]}" >>"$WORK/f"
    fi
  done
  fi_iops=$(cut -d' ' -f1 "$WORK/f" | median); ou_iops=$(cut -d' ' -f1 "$WORK/o" | median)
  fi_cpu=$(cut -d' ' -f2 "$WORK/f" | median); ou_cpu=$(cut -d' ' -f2 "$WORK/o" | median)
  fi_pcpu=$(cut -d' ' -f3 "$WORK/f" | median); ou_pcpu=$(cut -d' ' -f3 "$WORK/o" | median)
  # IOPS spread over the repeats, (max - min) / median, to show how noisy a row is.
  fi_spread=$(cut -d' ' -f1 "$WORK/f" | sort -g | awk -v m="$fi_iops" '{ v[NR] = $1 } END { printf "%.0f", (v[NR] - v[1]) * 100 / m }')
  ou_spread=$(cut -d' ' -f1 "$WORK/o" | sort -g | awk -v m="$ou_iops" '{ v[NR] = $1 } END { printf "%.0f", (v[NR] - v[1]) * 100 / m }')
  line=$(awk -v l="$label" -v nj="$nj" -v fi="$fi_iops" -v oi="$ou_iops" -v fc="$fi_cpu" \
    -v oc="$ou_cpu" -v fp="$fi_pcpu" -v op="$ou_pcpu" -v fs="$fi_spread" -v os="$ou_spread" 'BEGIN {
      printf "| %s | %d | %.0f | %.0f | **%.2f** | %s%% / %s%% | %.2f | %.2f | **%.2f** | %.2f | %.2f | %.2f |",
        l, nj, oi, fi, oi / fi, os, fs, oc, fc, oc / fc, op, fp, op / fp }')
  echo "$line" | tee -a "$ROWS" >&2
  echo "  runs fio: $(tr '\n' ';' <"$WORK/f")  ours: $(tr '\n' ';' <"$WORK/o")" >&2
done

SECTION=$WORK/section.md
{
  echo "<!-- executor-vs-fio:begin (generated by bench/executor_vs_fio.sh; edit outside) -->"
  echo "Job: \`rw=randread bs=4k direct=1 ioengine=io_uring norandommap time_based runtime=${RUNTIME}s\`,"
  echo "jobs as processes (fio's default), fio's default batching (iodepth_batch_submit=1,"
  echo "iodepth_batch_complete_min=max=1) unless the row says otherwise. Median of ${REPEATS} runs per"
  echo "tool, fio and ours alternating. Target: \`$LOOP\` (loop device, no direct-io) over a"
  echo "${SIZE_MB} MiB file in /dev/shm."
  echo
  echo "*job CPU* = usr+sys of the job processes over the measured phase as each tool reports it"
  echo "(fio: \`usr_cpu+sys_cpu\` × \`job_runtime\`; ours: \`usr_cpu_ns+sys_cpu_ns\`), per completed I/O."
  echo "*process CPU* = usr+sys of the whole process tree from \`/usr/bin/time\` (includes set-up,"
  echo "fio's main process and our sampler), per completed I/O."
  echo
  echo "Ratios are ours / fio: above 1 is better for IOPS, below 1 is better for CPU. *spread* ="
  echo "(max − min) / median of the IOPS over the repeats, ours / fio."
  echo
  echo "| job | numjobs | IOPS ours | IOPS fio | IOPS ratio | spread | job CPU µs/IO ours | fio | CPU ratio | process CPU µs/IO ours | fio | ratio |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  cat "$ROWS"
  echo
  echo "Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r), $(fio --version),"
  echo "liburing $(pkg-config --modversion liburing 2>/dev/null || echo '?'),"
  echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource),"
  echo "scheduler of $(basename "$LOOP"): $(cat /sys/block/"$(basename "$LOOP")"/queue/scheduler)."
  echo "Run on $(date -u +%Y-%m-%d) by \`bench/executor_vs_fio.sh\`."
  echo "<!-- executor-vs-fio:end -->"
} >"$SECTION"

mkdir -p "$(dirname "$DOC")"
if [ -f "$DOC" ] && grep -q 'executor-vs-fio:begin' "$DOC"; then
  awk -v sec="$SECTION" '
    /executor-vs-fio:begin/ { while ((getline l < sec) > 0) print l; skip = 1; next }
    /executor-vs-fio:end/ { skip = 0; next }
    !skip { print }' "$DOC" >"$WORK/doc" && cp "$WORK/doc" "$DOC"
elif [ -f "$DOC" ]; then
  { echo; echo "## Executor vs fio"; echo; cat "$SECTION"; } >>"$DOC"
else
  { echo "# blkbench performance"; echo; echo "## Executor vs fio"; echo; cat "$SECTION"; } >"$DOC"
fi
echo "wrote $DOC" >&2
