# Site hooks for gate-kernel-patch.sh: copy to hooks.sh, fill in, and point
# BLKBENCH_CI_HOOKS at it. They are sourced by bash; each gets the kernel to act on and
# must return 0 on success. Only real-kernel runs call them (sim: kernels need no host).

# Build (or fetch) the kernel for commit/tag $1; print its release (uname -r) on stdout.
build_kernel() {
  local rev=$1
  echo "build_kernel: fill in examples/ci/hooks.sh (e.g. make -C linux O=out bindeb-pkg at $rev)" >&2
  return 1
}

# Boot the test host into kernel release $1 (kexec, a grub-reboot + reboot, or an IPMI /
# cloud API). Return once the reboot is under way; the script then waits for the host's
# agent to register with that release.
boot_test_host() {
  local release=$1
  echo "boot_test_host: fill in examples/ci/hooks.sh (e.g. ssh testbox grub-reboot '$release' && ssh testbox reboot)" >&2
  return 1
}
