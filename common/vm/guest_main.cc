// blkbench-vm-guest: the program a VM test host's /init runs (chrooted into the host's
// root) to serve the host's commands over virtio-serial. See common/vm/guest_agent.h.
#include "common/vm/guest_agent.h"

int main() { return blkbench::vm::RunGuestAgent(); }
