#!/usr/bin/env python3
"""Compares the shape of two fio JSON documents: every key path of REFERENCE (fio's own
output) must exist in CANDIDATE with the same JSON type (object, array, string, integer,
float). Prints one line per difference; exit 1 if there is any.

    fio_json_shape.py REFERENCE CANDIDATE

List elements compare against the candidate's first element; the keys under
"clat_ns.bins" are latency values, so only their presence and type compare; fio's
"disk_util" exists only for block devices and is compared when both have it.
"""
import json
import sys


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def compare(ref, cand, path, out):
    if kind(ref) != kind(cand):
        out.append(f"{path}: {kind(cand)} where fio has {kind(ref)}")
        return
    if isinstance(ref, dict):
        if path.endswith("/bins") or path.endswith("/job options"):
            # bins: latency values as keys; job options: what each job set.
            return
        for k, v in ref.items():
            if k not in cand:
                if k == "disk_util":
                    continue
                out.append(f"{path}/{k}: missing")
                continue
            compare(v, cand[k], f"{path}/{k}", out)
    elif isinstance(ref, list) and ref and cand:
        compare(ref[0], cand[0], path + "[0]", out)


def main():
    ref = json.load(open(sys.argv[1]))
    cand = json.load(open(sys.argv[2]))
    out = []
    compare(ref, cand, "", out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
