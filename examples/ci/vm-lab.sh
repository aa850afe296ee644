# The --vm mode of gate-kernel-patch.sh (sourced by it; uses its $blkbench, $baseline,
# $candidate, $timeout, $work, $gate_opts, with_kernels, timeout_seconds and die): both
# kernels booted as VM test hosts (docs/vm-hosts.md), through a transient agent when there
# is a controller, or `blkbench run --vm` without one.
# shellcheck shell=bash disable=SC2154  # (the variables above are the sourcing script's)

# How often the agent list is read while the guests boot.
readonly kVmPollSeconds=1
# How long a stopping agent gets to cancel its runs and power its guests off.
readonly kAgentStopSeconds=60

vm_kind="" vm_class="" vm_device_yaml="" agent_pid=""

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

# A kernel spec as a double-quoted YAML string.
yaml_string() {
  [[ "$1" != *[\"\\]* && "$1" != *$'\n'* ]] || die "kernel spec '$1' holds a quote or backslash"
  printf '"%s"' "$1"
}

# Writes the transient agent's config to $work/agent.yaml: two VM test hosts, base and cand.
vm_agent_config() {
  local id=$1
  {
    echo "agent_id: $id"
    echo "controller: $(yaml_string "$BLKBENCH_CONTROLLER")"
    echo "state_dir: $work/agent-state"
    [ -z "${BLKBENCH_CI_AGENT_TLS_DIR:-}" ] || echo "tls_dir: $(yaml_string "$BLKBENCH_CI_AGENT_TLS_DIR")"
    echo "sim_devices: []"
    echo 'metrics_listen: ""'
    echo "vm_hosts:"
    echo "  - name: base"
    echo "    kernel: $(yaml_string "$baseline")"
    echo "$vm_device_yaml"
    echo "  - name: cand"
    echo "    kernel: $(yaml_string "$candidate")"
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
    echo "ci-vm-$(hostname -s)-$$"
  fi
}

# Whether process $1 runs (exists and is not a zombie: an exited child not yet waited for).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# Stops the transient agent: SIGTERM cancels its runs and powers its guests off; SIGKILL
# after kAgentStopSeconds (its qemu processes die with it: PR_SET_PDEATHSIG).
vm_stop_agent() {
  [ -n "$agent_pid" ] || return 0
  kill -TERM "$agent_pid" 2>/dev/null || true
  local deadline=$((SECONDS + kAgentStopSeconds))
  while alive "$agent_pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  kill -KILL "$agent_pid" 2>/dev/null || true
  wait "$agent_pid" 2>/dev/null || true
  agent_pid=""
}

vm_agent_failed() {
  echo "gate-kernel-patch: $*; the agent's log ends:" >&2
  tail -n 30 "$work/agent.log" >&2
  exit 3
}

# Polls `blkbench agents` until agent $1 is connected and offers a device of class
# $vm_class in both guests; prints their kernel releases "BASE CAND". Bounded by --timeout;
# a guest that did not boot, or the agent exiting, ends the wait at once.
vm_wait_for_guests() {
  local id=$1 deadline=$(( $(date +%s) + $(timeout_seconds) )) base="" cand="" host release
  while :; do
    alive "$agent_pid" || vm_agent_failed "the agent $id exited"
    if "$blkbench" agents --format csv > "$work/agents.csv" 2> "$work/agents.err"; then
      if grep -q "agent $id did not offer vm:" "$work/agents.err"; then
        grep "agent $id did not offer vm:" "$work/agents.err" >&2
        vm_agent_failed "a VM test host did not boot"
      fi
      # agent,state,kernel,cpus,device,class,...: the kernel of a guest's device is the guest's.
      for host in base cand; do
        release=$(awk -F, -v a="$id" -v p="vm:$host/" -v c="$vm_class" \
          'NR > 1 && $1 == a && $2 == "connected" && index($5, p) == 1 && $6 == c { print $3; exit }' \
          "$work/agents.csv")
        if [ "$host" = base ]; then base=$release; else cand=$release; fi
      done
      if [ -n "$base" ] && [ -n "$cand" ]; then
        echo "$base $cand"
        return
      fi
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
  local agent=${BLKBENCH_AGENT:-blkbench-agent} id releases base cand rc=0
  vm_matrix '"base", "cand"' "$work/check.yaml"  # a bad matrix fails before any boot
  command -v "$agent" >/dev/null || die "no agent program '$agent' (install blkbench-agent or set \$BLKBENCH_AGENT)"
  id=$(vm_agent_id)
  vm_agent_config "$id"
  trap 'vm_stop_agent; rm -rf "$work"' EXIT
  trap 'exit 3' INT TERM HUP
  echo "gate-kernel-patch: starting agent $id with VM test hosts base ($baseline) and cand ($candidate)" >&2
  "$agent" --config "$work/agent.yaml" > "$work/agent.log" 2>&1 &
  agent_pid=$!
  releases=$(vm_wait_for_guests "$id")
  read -r base cand <<< "$releases"
  echo "gate-kernel-patch: base booted $base, cand booted $cand" >&2
  [ "$base" != "$cand" ] || same_release "$base"
  vm_matrix "\"$base\", \"$cand\"" "$work/matrix.yaml"
  "$blkbench" gate --submit "$work/matrix.yaml" --axis kernel --baseline "$base" \
    --candidate "$cand" --timeout "$timeout" "${gate_opts[@]}" || rc=$?
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
  vm_matrix "" "$work/matrix.yaml"
  { "$blkbench" run "$work/matrix.yaml" --vm "$vm" --kernel "$baseline" --kernel "$candidate" \
      --db "$work/ci.db" --state-dir "$work/state" 2>&1 1>&3 | tee "$work/run.err" >&2; } 3>&1 ||
    rc=$?
  line=$(grep -o 'compare the kernels: .*' "$work/run.err" || true)
  if [ -z "$line" ]; then
    ! grep -q ' both booted ' "$work/run.err" ||
      same_release "$(sed -n 's/.* both booted \([^:]*\):.*/\1/p' "$work/run.err")"
    die "blkbench run failed (exit $rc): nothing to gate"
  fi
  # "... --experiment N --axis kernel --baseline R1 --candidate R2", R1 from --baseline.
  read -ra line <<< "${line#*--experiment }"
  rc=0
  "$blkbench" gate --db "$work/ci.db" --experiment "${line[0]}" --axis kernel \
    --baseline "${line[4]}" --candidate "${line[6]}" "${opts[@]}" || rc=$?
  exit "$rc"
}
