# The --vm mode of gate-kernel-patch.sh (sourced by it; uses its $blkbench, $baseline,
# $candidate, $timeout, $work, $gate_opts, with_kernels, timeout_seconds and die): both
# kernels booted as VM test hosts (docs/vm-hosts.md), through a transient agent when there
# is a controller, or `blkbench run --vm` without one.
# shellcheck shell=bash disable=SC2154  # (the variables above are the sourcing script's)

# How often the agent list is read while the guests boot.
readonly kVmPollSeconds=1
# How long a stopping agent (or blkbench run) gets to cancel its runs and power its guests
# off before SIGKILL.
readonly kStopSeconds=60

vm_kind="" vm_class="" vm_device_yaml=""
agent_pid="" child_pid="" base_release="" cand_release=""
# auto: kvm where it can run the guests, else tcg (a /dev/kvm that opens but cannot is
# noticed at the first boot: docs/vm-hosts.md); kvm to fail rather than measure under tcg.
vm_accel=${BLKBENCH_CI_VM_ACCEL:-auto}
case "$vm_accel" in
  auto|kvm|tcg) ;;
  *) die "\$BLKBENCH_CI_VM_ACCEL is '$vm_accel' (expected auto, kvm or tcg)" ;;
esac

# Parses --vm KIND[:KEY=VALUE,...] as `blkbench run --vm` reads it (cli/run_vm.h): sets
# vm_kind, vm_class (the class the device is offered as) and vm_device_yaml (its lines in
# a vm_hosts entry of agent.yaml). Values are checked by the agent's config reader.
vm_parse() {
  local spec=$1 keys="" pair pairs key value allowed
  vm_kind=${spec%%:*}
  [ "$vm_kind" = "$spec" ] || keys=${spec#*:}
  case "$vm_kind" in
    null_blk) allowed="" ;;
    hdd) allowed="size class" ;;
    nvme|virtio) allowed="size queues class" ;;
    *) die "--vm '$spec': unknown kind '$vm_kind' (expected null_blk, nvme, hdd or virtio)" ;;
  esac
  vm_class=$vm_kind
  if [ "$vm_kind" = null_blk ]; then
    [ -z "$keys" ] || die "--vm '$spec': null_blk takes no keys (the matrix's device: null_blk: keys configure it)"
    vm_device_yaml="    null_blk: true"
    return
  fi
  local disk="kind: $vm_kind"
  IFS=, read -ra pairs <<< "$keys"
  for pair in "${pairs[@]}"; do
    key=${pair%%=*} value=${pair#*=}
    [[ " $allowed " == *" $key "* && "$pair" == *=* && "$value" =~ ^[A-Za-z0-9_-]+$ ]] ||
      die "--vm '$spec': bad key '$pair' ($vm_kind takes ${allowed// /, } as KEY=VALUE)"
    [ "$key" != class ] || vm_class=$value
    disk+=", $key: $value"
  done
  vm_device_yaml="    disks:
      - {$disk}"
}

# The matrix for the guests: kernel axis $1 (as with_kernels takes it), the --vm device's
# class as target.device_class, written to $2. A disk has no null_blk keys.
vm_matrix() {
  local list=$1 out=$2
  with_kernels "$list" "$out.in"
  sed -i -E "s#(device_class:[[:space:]]*)(\"[^\"]*\"|[^,}[:space:]]+)#\\1$vm_class#" "$out.in"
  if [ "$vm_kind" != null_blk ]; then
    awk '/^device:/ { skip = 1; next } skip && /^[[:space:]]/ { next } { skip = 0; print }' \
      "$out.in" > "$out"
  else
    mv "$out.in" "$out"
  fi
  "$blkbench" validate "$out" >/dev/null || exit 3
}

# Writes the transient agent's config to $work/agent.yaml: two VM test hosts, base and cand.
# The values go in as double-quoted YAML strings, so none may hold a quote or backslash.
vm_agent_config() {
  local id=$1 value
  for value in "$id" "$baseline" "$candidate" "$BLKBENCH_CONTROLLER" "${BLKBENCH_CI_AGENT_TLS_DIR:-}"; do
    [[ "$value" != *[\"\\]* && "$value" != *$'\n'* ]] || die "'$value' holds a quote or backslash"
  done
  {
    echo "agent_id: \"$id\""
    echo "controller: \"$BLKBENCH_CONTROLLER\""
    echo "state_dir: \"$work/agent-state\""
    [ -z "${BLKBENCH_CI_AGENT_TLS_DIR:-}" ] || echo "tls_dir: \"$BLKBENCH_CI_AGENT_TLS_DIR\""
    echo "sim_devices: []"
    echo 'metrics_listen: ""'
    echo "vm_hosts:"
    echo "  - name: base"
    echo "    kernel: \"$baseline\""
    echo "    accel: $vm_accel"
    echo "$vm_device_yaml"
    echo "  - name: cand"
    echo "    kernel: \"$candidate\""
    echo "    accel: $vm_accel"
    echo "$vm_device_yaml"
  } > "$work/agent.yaml"
}

# The agent id: with TLS the CN of the lab's agent certificate (the controller refuses any
# other id), else one unique to this job.
vm_agent_id() {
  local dir=${BLKBENCH_CI_AGENT_TLS_DIR:-} certs
  if [ -n "${BLKBENCH_CI_AGENT_ID:-}" ]; then
    echo "$BLKBENCH_CI_AGENT_ID"
  elif [ -n "$dir" ]; then
    certs=$(find "$dir" -maxdepth 1 -name 'agent-*.pem' -printf '%f\n')
    [ "$(echo "$certs" | grep -c .)" -eq 1 ] ||
      die "\$BLKBENCH_CI_AGENT_TLS_DIR ($dir) needs exactly one agent-ID.pem, or set \$BLKBENCH_CI_AGENT_ID"
    certs=${certs%.pem}
    echo "${certs#agent-}"
  else
    echo "ci-vm-${HOSTNAME%%.*}-$$"
  fi
}

# Whether process $1 runs (exists and is not a zombie: an exited child not yet waited for).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# Stops child $1: SIGTERM (the agent cancels its runs and powers its guests off, `blkbench
# run` does the same for its own), SIGKILL after kStopSeconds (a guest's qemu dies with
# its owner: PR_SET_PDEATHSIG).
stop_child() {
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || true
  local deadline=$((SECONDS + kStopSeconds))
  while alive "$1" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Runs "$@" as a background child and waits for it: a signal to the script then
# interrupts the wait at once (a foreground command would be waited for first), and the
# EXIT trap stops the child.
run_child() {
  local rc=0
  "$@" &
  child_pid=$!
  wait "$child_pid" || rc=$?
  child_pid=""
  return "$rc"
}

# On any exit: the running command, then the agent, then the temporary directory.
vm_cleanup() {
  stop_child "$child_pid"
  stop_child "$agent_pid"
  rm -rf "$work"
}

vm_agent_failed() {
  echo "gate-kernel-patch: $*; the agent's log ends:" >&2
  tail -n 30 "$work/agent.log" >&2
  exit 3
}

# Polls `blkbench agents` until agent $1 is connected and offers a device of class
# $vm_class in both guests; sets base_release and cand_release from the kernel column.
# Bounded by --timeout; a guest that did not boot, or the agent exiting, ends it at once.
vm_wait_for_guests() {
  local id=$1 deadline=$(( $(date +%s) + $(timeout_seconds) )) host release
  while :; do
    alive "$agent_pid" || vm_agent_failed "the agent $id exited"
    base_release="" cand_release=""
    if "$blkbench" agents --format csv > "$work/agents.csv" 2> "$work/agents.err"; then
      if grep -q "agent $id did not offer vm:" "$work/agents.err"; then
        grep "agent $id did not offer vm:" "$work/agents.err" >&2
        vm_agent_failed "a VM test host did not boot"
      fi
      # agent,state,kernel,cpus,device,class,...: a guest's device has the guest's kernel.
      for host in base cand; do
        release=$(awk -F, -v a="$id" -v p="vm:$host/" -v c="$vm_class" \
          'NR > 1 && $1 == a && $2 == "connected" && index($5, p) == 1 && $6 == c { print $3; exit }' \
          "$work/agents.csv")
        printf -v "${host}_release" '%s' "$release"
      done
      [ -z "$base_release" ] || [ -z "$cand_release" ] || return 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      cat "$work/agents.err" >&2
      vm_agent_failed "agent $id did not offer $vm_class in both guests within $timeout"
    fi
    sleep "$kVmPollSeconds"
  done
}

same_release() {
  die "--baseline $baseline and --candidate $candidate both boot kernel $1: the kernel axis cannot tell them apart; build the candidate with its own release (CONFIG_LOCALVERSION=-patch, or make LOCALVERSION=-patch)"
}

# With a controller: a transient agent offers both guests, the matrix is submitted with the
# kernel axis set to their releases and gated; the agent is stopped however this ends.
vm_gate_with_controller() {
  local agent=${BLKBENCH_AGENT:-blkbench-agent} id rc=0
  vm_matrix '"base", "cand"' "$work/check.yaml"  # a bad matrix fails before any boot
  command -v "$agent" >/dev/null || die "no agent program '$agent' (install blkbench-agent or set \$BLKBENCH_AGENT)"
  id=$(vm_agent_id)
  vm_agent_config "$id"
  trap vm_cleanup EXIT
  trap 'exit 3' INT TERM HUP
  echo "gate-kernel-patch: starting agent $id with VM test hosts base ($baseline) and cand ($candidate)" >&2
  "$agent" --config "$work/agent.yaml" > "$work/agent.log" 2>&1 &
  agent_pid=$!
  vm_wait_for_guests "$id"
  echo "gate-kernel-patch: base booted $base_release, cand booted $cand_release" >&2
  [ "$base_release" != "$cand_release" ] || same_release "$base_release"
  vm_matrix "\"$base_release\", \"$cand_release\"" "$work/matrix.yaml"
  run_child "$blkbench" gate --submit "$work/matrix.yaml" --axis kernel \
    --baseline "$base_release" --candidate "$cand_release" --timeout "$timeout" \
    "${gate_opts[@]}" || rc=$?
  exit "$rc"
}

# Without a controller: `blkbench run --vm` boots both guests for one command, makes the
# kernel an axis of their releases and stores the runs; the gate reads that store.
vm_gate_daemonless() {
  local opts=() i line rc=0
  for ((i = 0; i < ${#gate_opts[@]}; i += 2)); do
    if [ "${gate_opts[i]}" = --auto-repeat ]; then
      echo "gate-kernel-patch: --auto-repeat needs a controller (\$BLKBENCH_CONTROLLER); ignored" >&2
    else
      opts+=("${gate_opts[i]}" "${gate_opts[i + 1]}")
    fi
  done
  [ "$vm_accel" = auto ] ||
    echo "gate-kernel-patch: \$BLKBENCH_CI_VM_ACCEL needs a controller (blkbench run --vm picks kvm or tcg itself); ignored" >&2
  vm_matrix "" "$work/matrix.yaml"
  trap vm_cleanup EXIT
  trap 'exit 3' INT TERM HUP
  # Its progress goes to the job log as it comes, and to run.err for the releases.
  mkfifo "$work/progress"
  tee "$work/run.err" < "$work/progress" >&2 &
  local tee_pid=$!
  run_child "$blkbench" run "$work/matrix.yaml" --vm "$vm" --kernel "$baseline" \
    --kernel "$candidate" --db "$work/ci.db" --state-dir "$work/state" 2> "$work/progress" ||
    rc=$?
  wait "$tee_pid" || true
  line=$(grep -o 'compare the kernels: .*' "$work/run.err" || true)
  if [ -z "$line" ]; then
    ! grep -q ' both booted ' "$work/run.err" ||
      same_release "$(sed -n 's/.* both booted \([^:]*\):.*/\1/p' "$work/run.err")"
    die "blkbench run failed (exit $rc): nothing to gate"
  fi
  # "... --experiment N --axis kernel --baseline R1 --candidate R2", R1 from --baseline.
  read -ra line <<< "${line#*--experiment }"
  rc=0
  run_child "$blkbench" gate --db "$work/ci.db" --experiment "${line[0]}" --axis kernel \
    --baseline "${line[4]}" --candidate "${line[6]}" "${opts[@]}" || rc=$?
  exit "$rc"
}
