#!/usr/bin/env python3
"""Fails when an #include points from a lower layer to a higher one (docs/architecture.md).

The layers, lowest first. A file may include its own layer and any lower one; layers of
the same rank (agent, controller; engine/device, engine/sched) must not include each
other. A folder inherits the layer of its closest listed parent; engine/ and agent/ have
sub-layers of their own (engine/sim < engine/device, engine/sched < engine/model).
Usage: scripts/check_layers.py [repo root]   (exit 1 and one line per violation)
scripts/check_layers_test.py plants violations in a scratch tree and checks they fail.
"""
import os
import re
import subprocess
import sys

# (folder, rank). Lower ranks may never include higher ones.
LAYERS = [
    ("proto", 0),
    ("common", 1),
    ("workloads", 2),
    ("engine", 3),
    # The engine's own order: the simulator and the block-layer structures know nothing
    # of the rest; device models and schedulers build on the simulator only; the model
    # of blk-mq puts them together.
    ("engine/sim", 3.0),
    ("engine/blk", 3.0),
    ("engine/device", 3.1),
    ("engine/sched", 3.1),
    ("engine/model", 3.2),
    ("agent/executor", 4),
    ("agent", 5),
    ("controller", 5),
    ("cli", 6),
    ("tests", 7),
    ("bench", 7),
]

# Known violations, each with the reason it is tolerated for now. Keep this list short:
# an entry is a debt, not a design.
ALLOWED = set()  # none: the elevator registry lives in engine/model, which it serves

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for folder, rank in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, rank)
    return best


def sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "*.cc", "*.h", "*.proto"],
                             check=True, capture_output=True, text=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith((".cc", ".h", ".proto")):
                    found.append(os.path.relpath(os.path.join(d, f), root))
        return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    violations = []
    checked = 0
    for path in sorted(sources(root)):
        src = layer_of(path)
        if src is None:
            continue
        checked += 1
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                dst = layer_of(m.group(1))
                if dst is None or dst[0] == src[0]:
                    continue
                if dst[1] < src[1] or (path, m.group(1)) in ALLOWED:
                    continue
                violations.append(f"{path}:{lineno}: {src[0]} (layer {src[1]}) includes "
                                  f"\"{m.group(1)}\" from {dst[0]} (layer {dst[1]})")
    for v in violations:
        print(v)
    if violations:
        order = " < ".join(f"{f}" for f, _ in LAYERS)
        print(f"check_layers: {len(violations)} include(s) against the layer order "
              f"({order}; same rank may not include each other)", file=sys.stderr)
        return 1
    print(f"check_layers: {checked} files, no include against the layer order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
