#!/usr/bin/env python3
"""Expands a recording's lines of schema 2 (docs/record.md, "Schema 2")
into full snapshots, as the documentation says to read them, independently
of the C reader: each delta line applied to the snapshot before it.

    rec_expand.py < lines.jsonl > full.jsonl

Every snapshot line comes out whole (schema 1 and 2 full lines as they
are, delta lines applied); event lines are left out."""
import json
import sys


def whole(o):
    return isinstance(o, dict) and ("source" in o or "kind" in o)


def follow_gpus(devs, d):
    """A MIG device's metric of its whole GPU ("scope": "parent") that the
    line changes on the GPU and does not name on the MIG device becomes
    the GPU's."""
    gpu = gd = None
    for dev, e in zip(devs, d):
        if dev.get("kind") == "gpu":
            gpu, gd = dev, e
            continue
        if gpu is None or dev.get("kind") != "mig" or whole(e):
            continue
        said = gd.get("metrics", {})
        own = e.get("metrics", {})
        for k, m in dev.get("metrics", {}).items():
            g = gpu.get("metrics", {}).get(k)
            if (isinstance(m, dict) and m.get("scope") == "parent" and isinstance(g, dict)
                    and k not in own and (whole(gd) or k in said)):
                dev["metrics"][k] = dict(g, scope="parent")


def merge(dst, src, top=False):
    for k, v in src.items():
        if top and k in ("schema", "delta"):
            continue
        cur = dst.get(k)
        if isinstance(v, dict) and isinstance(cur, dict) and not whole(v):
            merge(cur, v)
        elif (isinstance(v, list) and isinstance(cur, list) and len(v) == len(cur)
              and all(isinstance(e, dict) for e in v)):
            for i, e in enumerate(v):
                if isinstance(cur[i], dict) and not whole(e):
                    merge(cur[i], e)
                else:
                    cur[i] = e
            if top and k == "devices":
                follow_gpus(cur, v)
        elif (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))) \
                and isinstance(cur, dict) and "source" in cur:
            cur["value"] = v
        else:
            dst[k] = v


def main():
    state = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        o = json.loads(line)
        if "type" in o:
            continue
        if o.get("delta") is True:
            merge(state, o, top=True)
        else:
            state = o
        print(json.dumps(state, separators=(",", ":")))


main()
