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
