#!/usr/bin/env python3
"""Scraped /metrics pages as the input series of a `promtool test rules` file.

prom_series.py INSTANCE JOB NAMES PAGE...

Each PAGE is one scrape, in order, one interval apart; "-" is a scrape that
failed. What Prometheus would store from them: every sample of the page
whose metric name matches the regular expression NAMES, with the target's
instance and job labels added, a staleness marker where a series leaves the
page (or the scrape fails), and up (1, or 0 for a failed scrape). Prints
the input_series entries (YAML, indented for a test under `tests:`).
"""
import re
import sys


def parse(path, names):
    """{series: value} of the page's samples whose name matches names."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            series, _, value = line.rpartition(" ")
            name = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", series).group(0)
            if names.fullmatch(name):
                out[series] = float(value)
    return out


def with_target(series, instance, job):
    target = f'instance="{instance}",job="{job}"'
    if series.endswith("}"):
        return series[:-1] + "," + target + "}"
    return series + "{" + target + "}"


def number(v):
    """A value promtool's series notation reads as one number (no exponent,
    which it could take for its a+bxn expansion)."""
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return format(v, "f").rstrip("0").rstrip(".")


def main():
    instance, job, names = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
    pages = [None if p == "-" else parse(p, names) for p in sys.argv[4:]]
    order = []
    for p in pages:
        for s in p or {}:
            if s not in order:
                order.append(s)
    up = ["0" if p is None else "1" for p in pages]
    print(f"      - series: '{with_target('up', instance, job)}'")
    print(f"        values: '{' '.join(up)}'")
    for s in order:
        vals, seen = [], False
        for p in pages:
            if p is not None and s in p:
                vals.append(number(p[s]))
                seen = True
            elif seen:
                vals.append("stale")
                seen = False
            else:
                vals.append("_")
        quoted = with_target(s, instance, job).replace("'", "''")
        print(f"      - series: '{quoted}'")
        print(f"        values: '{' '.join(vals)}'")


if __name__ == "__main__":
    main()
