#!/usr/bin/env python3
"""Lists every test that skipped, with its reason, and fails on a skip nobody decided on.

Reads the JUnit files `ctest --output-junit` wrote, prints one line per skipped test
(its reason is the text GoogleTest printed after "Skipped"), and compares them with
tests/allowed_skips.txt: each line there is `TEST_GLOB  REASON_REGEX  # why`, a skip this
kind of machine is expected to make. A skip that no line allows -- an unlisted test, or a
listed one skipping for another reason -- is unexpected, and the exit status is 1.
Usage: scripts/check_skips.py ALLOWED_FILE JUNIT.xml...
"""
import fnmatch
import re
import sys
import xml.etree.ElementTree as ET


def skip_reason(output):
    """The message after gtest's 'file:line: Skipped' line, up to '[  SKIPPED ]'."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(": Skipped"):
            reason = []
            for rest in lines[i + 1:]:
                if rest.startswith("[  SKIPPED ]"):
                    break
                reason.append(rest.strip())
            return " ".join(r for r in reason if r) or "(no reason given)"
    return "(no reason given)"


def load_allowed(path):
    allowed = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: expected 'TEST_GLOB  REASON_REGEX  # why'")
            try:
                allowed.append((parts[0], re.compile(parts[1]), f"{path}:{n}"))
            except re.error as e:
                sys.exit(f"{path}:{n}: bad reason regex: {e}")
    return allowed


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    allowed = load_allowed(sys.argv[1])
    skips = []
    for junit in sys.argv[2:]:
        for case in ET.parse(junit).getroot().iter("testcase"):
            if case.get("status") != "notrun" or case.find("skipped") is None:
                continue
            if case.find("skipped").get("message") == "Disabled":
                continue
            out = case.findtext("system-out") or ""
            skips.append((case.get("name"), skip_reason(out)))
    unexpected = 0
    print(f"== skipped tests: {len(skips)}")
    for name, reason in sorted(skips):
        rule = next((a for a in allowed if fnmatch.fnmatchcase(name, a[0]) and a[1].search(reason)),
                    None)
        if rule is None:
            unexpected += 1
            print(f"UNEXPECTED SKIP {name}: {reason}")
        else:
            print(f"skip {name}: {reason}  (allowed by {rule[2]})")
    if unexpected:
        print(f"== {unexpected} unexpected skip(s): make the test run here, or add a line "
              f"with its reason to {sys.argv[1]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
