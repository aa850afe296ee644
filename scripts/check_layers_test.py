#!/usr/bin/env python3
"""Tests scripts/check_layers.py on scratch trees: a planted include against the layer
order (engine/sched -> engine/model, common -> agent, agent <-> controller) fails with a
line naming it; the same tree without it passes. Run by ctest (CheckLayersTest)."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


BASE = {
    "engine/model/config.h": "#pragma once\n",
    "engine/sim/simulator.h": "#pragma once\n",
    "engine/sched/elevator.h": '#include "engine/sim/simulator.h"\n',
    "engine/model/engine.cc": '#include "engine/sched/elevator.h"\n#include "engine/model/config.h"\n',
    "common/log.h": "#pragma once\n",
    "agent/agent.h": '#include "common/log.h"\n',
    "controller/controller.h": '#include "common/log.h"\n',
}


def check(name, extra, want_rc, want_text=""):
    files = dict(BASE)
    files.update(extra)
    rc, out = run(files)
    ok = rc == want_rc and want_text in out
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": rc {rc}, output:\n{out}"))
    return ok


def main():
    results = [
        check("a tree in order passes", {}, 0, "no include against the layer order"),
        check("engine/sched including engine/model fails",
              {"engine/sched/mq.cc": '#include "engine/model/config.h"\n'}, 1,
              'engine/sched/mq.cc:1: engine/sched (layer 3.1) includes "engine/model/config.h"'),
        check("engine/sim including engine/sched fails",
              {"engine/sim/cpu.cc": '#include "engine/sched/elevator.h"\n'}, 1, "engine/sim/cpu.cc:1"),
        check("common including agent fails",
              {"common/x.cc": '#include "agent/agent.h"\n'}, 1, "common/x.cc:1"),
        check("agent and controller (same rank) may not include each other",
              {"agent/y.cc": '#include "controller/controller.h"\n'}, 1, "agent/y.cc:1"),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
