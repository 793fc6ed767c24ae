#!/usr/bin/python3
"""A synthetic fleet for a real Prometheus: OpenMetrics text to backfill
(promtool tsdb create-blocks-from openmetrics) and a JSON truth file.

Every node's series are made from our own exporter's pages: the built
binary is run once per kind of hardware on the simulator
(`--once --format prometheus --compat dcgm`), and each page is replicated
per node. A node running our exporter gets the page's migmon_* series
(job "migmon"), a node running only dcgm-exporter the page's DCGM_FI_*
series (job "dcgm"). Per node:

- every series gets instance="NAME:9400" and its job; `migmon_host_info`'s
  hostname (dcgm-exporter's Hostname/hostname) becomes NAME;
- every GPU and MIG UUID gets the node's number (6 decimal digits, which
  are hex digits) as its last 6 hex digits, so UUIDs are unique across
  nodes and the node of a UUID can be read off it;
- values are varied deterministically per node, device and sample (ratios
  stay in 0..1, memory used stays under the total, counters never
  decrease), some devices are idle (utilisation 0) and some GPUs' health
  is warning or action, so totals are not all equal;
- S samples, STEP seconds apart, the last at END; `up` 1.

Variants (each picks nodes deterministically, spread over the fleet):
--down (up 0 for the last GAP seconds, every other series stopped GAP
seconds before END), --never-up (targets with only `up 0`),
--reconfig (a node on mig-reconfig.ini: the instances of its old MIG
layout stop GAP seconds before END, the new ones start then),
--legacy (nodes whose exporter gives no node summaries, migmon_node_*
and migmon_*_idle, as an older one: the fleet view aggregates their
devices' series instead),
--dup-uuid (pairs of nodes reporting the same UUIDs), --dcgm-only
(nodes running only dcgm-exporter).

The timeline and Prometheus' lookback: an instant query at time t sees a
series whose last sample is within the lookback L before t (no staleness
markers are written: the text format has none). Series that stopped GAP
seconds before END must not be seen by the queries of the test, which
run after END, while the live ones must: so L must be below GAP, and the
live series are seen until END + L (the truth file's `valid_until`).
The identity queries' last_over_time(...[10m]) see a stopped series until
END - GAP + 600. tests/fleet/promfleet.sh starts Prometheus with the
lookback the truth file names.

Usage: synth.py --nodes N [--dgx N] [variants] --out FILE --truth FILE
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

PORT = 9400
SUFFIX = "\x02"  # the last 6 hex digits of a UUID
NAME = "\x01"  # the node's name
UUID_RE = re.compile(r'((?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                     r'[0-9a-fA-F]{4}-[0-9a-fA-F]{6})[0-9a-fA-F]{6}')
SERIES_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

# Kinds of hardware: the scenario a page is taken from (relative to the
# source tree) and the simulated time.
HARDWARE = {
    "hgx-h100-8x": ("tests/fleet/hgx-h100-8x.ini", 100),
    "dgx-a100-8x7": ("sim/scenarios/dgx-a100-8x7.ini", 100),
    # before and after its MIG layout changed (t = 60 and 70)
    "reconfig-before": ("sim/scenarios/mig-reconfig.ini", 50),
    "reconfig-after": ("sim/scenarios/mig-reconfig.ini", 100),
}

# How each family's values vary (by name)
CONST, UTIL, PCT, MEMUSED, FBUSED, FBFREE, COUNTER, TEMP, POWER, TS, HEALTH, IDLE, NODESUM = \
    range(13)
DCGM_UTIL = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
             "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
             "DCGM_FI_PROF_DRAM_ACTIVE"}
DCGM_PCT = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"}
DCGM_COUNTER = {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"}
MIB = 1048576


def kind_of(name):
    if name.startswith("migmon_node_"):
        return NODESUM
    if name in ("migmon_gpu_idle", "migmon_mig_idle"):
        return IDLE
    if name == "migmon_last_sample_timestamp_seconds":
        return TS
    if name in ("migmon_gpu_health", "migmon_mig_health"):
        return HEALTH
    if name.startswith("migmon_host_"):
        return CONST
    if name.startswith("migmon_"):
        if name.endswith("_utilization_ratio") or name.endswith("_occupancy_ratio"):
            return UTIL
        if name.endswith("_memory_used_bytes"):
            return MEMUSED
        if name.endswith("_total"):
            return COUNTER
        if name in ("migmon_gpu_temperature_celsius", "migmon_gpu_memory_temperature_celsius"):
            return TEMP
        if name == "migmon_gpu_power_watts":
            return POWER
        return CONST
    if name in DCGM_UTIL:
        return UTIL
    if name in DCGM_PCT:
        return PCT
    if name == "DCGM_FI_DEV_FB_USED":
        return FBUSED
    if name == "DCGM_FI_DEV_FB_FREE":
        return FBFREE
    if name in DCGM_COUNTER:
        return COUNTER
    if name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"):
        return TEMP
    if name == "DCGM_FI_DEV_POWER_USAGE":
        return POWER
    return CONST


def mix(*xs):
    """A deterministic hash of small integers, in [0, 1)."""
    h = 2166136261
    for x in xs:
        h = ((h ^ (x & 0xffffffff)) * 16777619) & 0xffffffff
        h ^= h >> 13
        h = (h * 0x5bd1e995) & 0xffffffff
        h ^= h >> 15
    return h / 4294967296.0


def fmt(v):
    if v != v or v in (float("inf"), float("-inf")):
        return repr(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(round(v, 6))


class Series:
    __slots__ = ("key", "kind", "value", "dev", "state", "total", "reserved", "used", "isint")

    def __init__(self, key, kind, value, dev):
        self.key, self.kind, self.value, self.dev = key, kind, value, dev
        self.state = self.total = self.reserved = self.used = None
        self.isint = value == value and abs(value) != float("inf") and value == int(value)


class Device:
    """A GPU or MIG instance of a page, in the page's order."""

    def __init__(self, idx, labels, dcgm):
        self.idx = idx
        self.dcgm = dcgm
        self.gpu = int(labels.get("gpu", "-1"))
        if dcgm:
            self.uuid = labels.get("UUID")
            gi = labels.get("GPU_I_ID")
            self.mig = gi is not None
            self.gi = int(gi) if gi is not None else None
            self.ci = None
            self.profile = labels.get("GPU_I_PROFILE")
            self.mig_uuid = None
        else:
            self.uuid = labels.get("uuid")
            gi = labels.get("gpu_instance_id")
            self.mig = gi is not None
            self.gi = int(gi) if gi is not None else None
            ci = labels.get("compute_instance_id")
            self.ci = int(ci) if ci is not None else None
            self.profile = labels.get("mig_profile")
            self.mig_uuid = labels.get("mig_uuid")
        self.verdict = None  # the page's health verdict
        self.series = {}  # family name -> Series


class Page:
    """One exporter page: its families in order, each a list of Series with
    the node's markers in their keys, and its devices."""

    def __init__(self, text, keep, job):
        self.families = []  # [(name, type, [Series])]
        self.devices = []
        self.hostname = None
        fam_of = {}
        types = {}
        devkey = {}
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                _, _, n, t = line.split(" ", 3)
                types[n] = t
                continue
            if not line or line.startswith("#"):
                continue
            m = SERIES_RE.match(line)
            if not m:
                raise SystemExit("synth: cannot read the page's line: " + line)
            name, lab, val = m.group(1), m.group(2) or "{}", m.group(3)
            if not keep(name):
                continue
            labels = dict(LABEL_RE.findall(lab))
            if name == "migmon_host_info":
                self.hostname = labels["hostname"]
            dcgm = name.startswith("DCGM_")
            key = None
            if dcgm and "UUID" in labels:
                key = ("d", labels["UUID"], labels.get("GPU_I_ID"))
            elif "uuid" in labels:
                key = ("m", labels["uuid"], labels.get("gpu_instance_id"),
                       labels.get("compute_instance_id"), labels.get("partition_id"))
            dev = None
            if key is not None:
                dev = devkey.get(key)
                if dev is None:
                    dev = devkey[key] = Device(len(self.devices), labels, dcgm)
                    self.devices.append(dev)
            s = Series(self._key(name, lab, job), kind_of(name), float(val), dev)
            if s.kind == HEALTH:
                s.state = labels["state"]
                if s.value == 1:
                    dev.verdict = s.state
            if dev is not None:
                dev.series.setdefault(name, s)
            if name not in fam_of:
                fam_of[name] = len(self.families)
                self.families.append((name, types.get(name, "gauge"), []))
            self.families[fam_of[name]][2].append(s)
        self.by_name = {n: ss for n, _, ss in self.families}
        # dcgm-exporter writes a MIG-enabled GPU's fields per GPU instance
        # only: the GPU itself is the one those name (no values of its own)
        gpus = {d.uuid for d in self.devices if not d.mig}
        devs = []
        for d in self.devices:
            if d.mig and d.uuid not in gpus:
                gpus.add(d.uuid)
                g = Device(len(self.devices) + len(devs), {"gpu": str(d.gpu), "UUID": d.uuid},
                           d.dcgm)
                devs.append(g)
            devs.append(d)
        self.devices = devs
        # the host's name: a label value of the page, made the node's
        if self.hostname is None:
            for _, _, ss in self.families:
                for s in ss:
                    hm = re.search(r'[Hh]ostname="([^"]*)"', s.key)
                    if hm:
                        self.hostname = hm.group(1)
                        break
                if self.hostname:
                    break
        for _, _, ss in self.families:
            for s in ss:
                if self.hostname is not None:
                    for lab in ("hostname", "Hostname"):
                        s.key = s.key.replace('%s="%s"' % (lab, self.hostname),
                                              '%s="%s"' % (lab, NAME))
        # dcgm-exporter's memory: free = total - reserved - used, kept so
        for d in self.devices:
            u, f, r = (d.series.get("DCGM_FI_DEV_FB_" + x) for x in ("USED", "FREE", "RESERVED"))
            if u and f:
                total = u.value + f.value + (r.value if r else 0)
                for s in (u, f):
                    s.total, s.reserved, s.used = total, (r.value if r else 0), u.value
        # migmon memory used: under the total of the same device
        for d in self.devices:
            for scope in ("gpu", "mig"):
                u = d.series.get("migmon_%s_memory_used_bytes" % scope)
                t = d.series.get("migmon_%s_memory_total_bytes" % scope)
                if u:
                    u.total = t.value if t else None
        seen = {}
        for d in self.devices:
            for u in (d.uuid, d.mig_uuid):
                if u and UUID_RE.match(u):
                    p = u[:-6]
                    if seen.setdefault(p, u) != u:
                        raise SystemExit("synth: %s and %s differ only in their last 6 digits"
                                         % (seen[p], u))

    @staticmethod
    def _key(name, lab, job):
        lab = UUID_RE.sub(lambda m: m.group(1) + SUFFIX, lab)
        extra = 'instance="%s:%d",job="%s"' % (NAME, PORT, job)
        if lab == "{}":
            return name + "{" + extra + "}"
        return name + lab[:-1] + "," + extra + "}"

    def family(self, name):
        return self.by_name.get(name, [])


def run_page(args, hw):
    scen, t = HARDWARE[hw]
    env = dict(os.environ, MIGMON_SIM_SCENARIO=os.path.join(args.src, scen),
               MIGMON_SIM_TIME=str(t))
    cmd = [args.bin, "--no-config", "--nvml-path", os.path.join(args.sim_dir, "libnvidia-ml.so.1"),
           "--dcgm-lib", os.path.join(args.sim_dir, "libdcgm.so.4"), "--once",
           "--format", "prometheus", "--compat", "dcgm"]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("synth: %s on %s: exit %d: %s" % (args.bin, scen, r.returncode,
                                                          r.stderr.strip()))
    return r.stdout


class Node:
    def __init__(self, num, width):
        self.num = num
        self.name = "node%0*d" % (width, num)
        self.instance = "%s:%d" % (self.name, PORT)
        self.hw = "hgx-h100-8x"
        self.dcgm_only = False
        self.down = False
        self.never_up = False
        self.reconfig = False
        self.uuid_of = None  # the node whose UUIDs it reports
        self.legacy = False  # its exporter writes no node summaries
        self.health = {}  # GPU index -> verdict set for this node


def plan(args):
    n = args.nodes
    width = max(4, len(str(n + args.never_up)))
    nodes = [Node(i, width) for i in range(1, n + 1)]
    # DGX nodes spread evenly: node i is one where i * dgx / n crosses an integer
    dgx = [nd for nd in nodes if (nd.num * args.dgx) // n != ((nd.num - 1) * args.dgx) // n]
    for nd in dgx:
        nd.hw = "dgx-a100-8x7"
    # the variants' nodes: a deterministic walk over the fleet, each node at
    # most one variant
    order = sorted(nodes, key=lambda nd: ((nd.num * 7919) % (n + 1), nd.num))
    taken = set()

    def pick(count, want_dgx=None):
        got = []
        for pref in ([want_dgx] if want_dgx is not None else []) + [None]:
            for nd in order:
                if len(got) == count:
                    return got
                if nd.num in taken or (pref is not None and (nd.hw == "dgx-a100-8x7") != pref):
                    continue
                taken.add(nd.num)
                got.append(nd)
        if len(got) < count:
            raise SystemExit("synth: %d nodes are too few for the variants asked" % n)
        return got

    # dcgm-only and down nodes: alternately a DGX and an HGX where there are both
    for nd in pick(args.dcgm_only // 2 + args.dcgm_only % 2, True) + pick(args.dcgm_only // 2, False):
        nd.dcgm_only = True
    for nd in pick(args.down // 2 + args.down % 2, True) + pick(args.down // 2, False):
        nd.down = True
    for nd in pick(args.reconfig, False):
        nd.hw = "reconfig"
        nd.reconfig = True
    for _ in range(args.dup_uuid):
        a, b = pick(2, False)
        b.uuid_of = a
    for nd in pick(args.legacy):
        nd.legacy = True
    # health: some GPUs warning, fewer action
    for nd in nodes:
        if nd.num % 9 == 4:
            nd.health[nd.num % 8] = "warning"
        if nd.num % 31 == 7:
            nd.health[(nd.num + 3) % 8] = "action"
    extra = []
    for i in range(args.never_up):
        nd = Node(n + 1 + i, width)
        nd.never_up = True
        extra.append(nd)
    return nodes, extra


class Gen:
    def __init__(self, args, pages):
        self.args = args
        self.pages = pages
        self.step = args.step
        self.gap_steps = args.gap // args.step
        # sample times: j = 0 is the last (END), j steps before it
        last = self.gap_steps + args.samples
        self.ts = ["%.3f" % (args.end - j * args.step) for j in range(last)]
        self.live = list(range(args.samples - 1, -1, -1))  # oldest first
        self.gone = list(range(self.gap_steps + args.samples - 1, self.gap_steps - 1, -1))
        self.new = list(range(self.gap_steps - 1, -1, -1))
        self.all = list(range(last - 1, -1, -1))
        self.sums = {}  # (page, node, j) -> the node's summary figures

    # --- values ---

    def idle(self, nd, dev):
        return mix(nd.num, dev.idx, 2) < 0.1

    def value(self, s, nd, j):
        k = s.kind
        v = s.value
        dev = s.dev
        if k == CONST:
            return v
        if k == TS:
            return self.args.end - j * self.step - 0.25
        if k == HEALTH:
            verdict = self.verdict(nd, dev)
            return 1 if s.state == verdict else 0
        if k == IDLE:
            return self.leaf_idle(nd, dev, j)
        if k == NODESUM:
            return self.node_sum(nd, j).get(s.key.split("{", 1)[0])
        if k in (UTIL, PCT):
            # a quarter the page's value, three quarters the device's own
            # share, so the fleet spans 0..1; a tenth of the devices idle
            if dev is None:
                return v
            if self.idle(nd, dev):
                return 0
            if k == PCT:
                return round((0.25 * v + 75 * mix(nd.num, dev.idx, 1)) * (1 - 0.01 * j))
            return round((0.25 * v + 0.75 * mix(nd.num, dev.idx, 1)) * (1 - 0.01 * j), 6)
        if k == MEMUSED:
            x = round(v * (0.4 + 1.2 * mix(nd.num, dev.idx, 3)) * (1 - 0.005 * j))
            if s.total is not None:
                x = min(x, int(s.total * 0.99))
            return x
        if k in (FBUSED, FBFREE):
            room = s.total - s.reserved
            used = min(round(s.used * (0.4 + 1.2 * mix(nd.num, dev.idx, 3)) * (1 - 0.005 * j)),
                       int(room * 0.99))
            return used if k == FBUSED else room - used
        if k == COUNTER:
            if v == 0:
                return 0
            base = v * (1 + mix(nd.num, dev.idx if dev else 0, 4))
            inc = max(1.0, base * 1e-4)
            x = base - j * inc
            return round(x) if s.isint else round(x, 3)
        if k == TEMP:
            return v + round(12 * mix(nd.num, dev.idx, 5)) - 6 - (j % 2)
        if k == POWER:
            return round(v * (0.6 + 0.5 * mix(nd.num, dev.idx, 6)) * (1 - 0.01 * j), 2)
        return v

    def verdict(self, nd, dev):
        if not dev.mig and dev.gpu in nd.health:
            return nd.health[dev.gpu]
        return dev.verdict

    def leaf_idle(self, nd, dev, j):
        """The exporter's idle rule on the varied values: utilisation under
        1 %, or with none, no process; None when neither is there."""
        sc = "mig" if dev.mig else "gpu"
        util = dev.series.get("migmon_%s_utilization_ratio" % sc)
        if util is not None:
            return int(self.value(util, nd, j) < 0.01)
        procs = dev.series.get("migmon_%s_processes" % sc)
        if procs is not None:
            return int(procs.value == 0)
        return None

    def node_sum(self, nd, j):
        """The node's migmon_node_* figures at sample j, by the exporter's
        rules (src/export/prom_node.c) on the varied device values; a
        figure it would not write is left out."""
        if nd.reconfig:
            page = self.pages["reconfig-after/migmon" if j < self.gap_steps
                              else "reconfig-before/migmon"]
        else:
            page = self.pages[nd.hw + "/migmon"]
        key = (id(page), nd.num, j)
        if key in self.sums:
            return self.sums[key]
        rank = {None: 0, "ok": 1, "warning": 2, "action": 3}
        devs = page.devices
        parents = {d.uuid for d in devs if d.mig}
        out = {"migmon_node_gpus": sum(not d.mig for d in devs),
               "migmon_node_mig_devices": sum(d.mig for d in devs)}
        idle = known = 0
        utils, used, total = [], 0, 0
        used_n = total_n = both = 0
        for d in devs:
            if not (d.mig or d.uuid not in parents):
                continue
            sc = "mig" if d.mig else "gpu"
            i = self.leaf_idle(nd, d, j)
            known += i is not None
            idle += i == 1
            u = d.series.get("migmon_%s_utilization_ratio" % sc)
            if u is not None:
                utils.append(self.value(u, nd, j))
            mu = d.series.get("migmon_%s_memory_used_bytes" % sc)
            mt = d.series.get("migmon_%s_memory_total_bytes" % sc)
            used_n += mu is not None
            total_n += mt is not None
            if mu is not None and mt is not None:
                both += 1
                used += self.value(mu, nd, j)
                total += mt.value
        if known:
            out["migmon_node_idle_devices"] = idle
        if utils:
            out["migmon_node_utilization_ratio_mean"] = sum(utils) / len(utils)
            out["migmon_node_utilization_ratio_max"] = max(utils)
        if both and used_n == both and total_n == both:
            out["migmon_node_memory_used_bytes"] = used
            out["migmon_node_memory_total_bytes"] = total
            out["migmon_node_memory_devices"] = both
        verdicts = [d for d in devs if not d.mig and self.verdict(nd, d) is not None]
        if verdicts:
            notok = sum(self.verdict(nd, d) in ("warning", "action") for d in devs)
            act = warn = 0
            for g in (d for d in devs if not d.mig):
                worst = max([self.verdict(nd, g)] +
                            [self.verdict(nd, m) for m in devs if m.mig and m.uuid == g.uuid],
                            key=lambda v: rank[v])
                act += worst == "action"
                warn += worst == "warning"
            out.update({"migmon_node_devices_not_ok": notok, "migmon_node_gpus_action": act,
                        "migmon_node_gpus_warning": warn,
                        "migmon_node_gpus_verdict": len(verdicts)})
        self.sums[key] = out
        return out

    # --- the node's series ---

    def reconfig_series(self, name):
        """The reconfigured node's series of a family: each with its window
        (the old layout's until the change, the new one's from it)."""
        before = self.pages["reconfig-before/migmon"]
        after = self.pages["reconfig-after/migmon"]
        bk = {s.key: s for s in before.family(name)}
        ak = {s.key: s for s in after.family(name)}
        out = []
        for s in after.family(name):
            out.append((s, self.all if s.key in bk else self.new))
        for s in before.family(name):
            if s.key not in ak:
                out.append((s, self.gone))
        return out

    def write(self, out, nodes, extra):
        names, types = [], {}
        for key in sorted(self.pages):
            for name, t, _ in self.pages[key].families:
                if name not in types:
                    types[name] = t
                    names.append(name)
        ts = self.ts
        # up: every target
        out.write("# TYPE up gauge\n")
        for nd in nodes + extra:
            job = "dcgm" if nd.dcgm_only else "migmon"
            key = 'up{instance="%s",job="%s"}' % (nd.instance, job)
            if nd.never_up:
                out.write("".join("%s 0 %s\n" % (key, ts[j]) for j in self.all))
            elif nd.down:
                out.write("".join("%s %d %s\n" % (key, j >= self.gap_steps, ts[j])
                                  for j in self.all))
            else:
                out.write("".join("%s 1 %s\n" % (key, ts[j]) for j in self.live))
        for name in names:
            t = types[name]
            if t == "counter" and name.endswith("_total"):
                out.write("# TYPE %s counter\n" % name[:-6])
            else:
                out.write("# TYPE %s %s\n" % (name, "gauge" if t == "counter" else t))
            for nd in nodes:
                if nd.never_up:
                    continue
                if nd.reconfig:
                    series = self.reconfig_series(name)
                else:
                    page = self.pages[nd.hw + ("/dcgm" if nd.dcgm_only else "/migmon")]
                    win = self.gone if nd.down else self.live
                    series = [(s, win) for s in page.family(name)]
                if nd.legacy and kind_of(name) in (IDLE, NODESUM):
                    continue
                if not series:
                    continue
                sfx = "%06d" % (nd.uuid_of or nd).num
                keys = "\n".join(s.key for s, _ in series).replace(NAME, nd.name)
                keys = keys.replace(SUFFIX, sfx).split("\n")
                buf = []
                for (s, win), key in zip(series, keys):
                    if s.kind == CONST:
                        vs = fmt(s.value)
                        buf.extend("%s %s %s\n" % (key, vs, ts[j]) for j in win)
                    else:
                        for j in win:
                            v = self.value(s, nd, j)
                            if v is not None:  # a figure the exporter would not write
                                buf.append("%s %s %s\n" % (key, fmt(v), ts[j]))
                out.write("".join(buf))
        out.write("# EOF\n")

    # --- the truth ---

    def devices(self, nd, page, j):
        sfx = "%06d" % (nd.uuid_of or nd).num

        def uu(u):
            return UUID_RE.sub(lambda m: m.group(1) + sfx, u) if u else None

        out = []
        for d in page.devices:
            e = {"kind": "mig" if d.mig else "gpu", "index": d.gpu,
                 "uuid": uu(d.mig_uuid) if d.mig else uu(d.uuid),
                 "parent_uuid": uu(d.uuid) if d.mig else None,
                 "gpu_instance_id": d.gi, "compute_instance_id": d.ci, "profile": d.profile}
            if d.dcgm:
                used = d.series.get("DCGM_FI_DEV_FB_USED")
                util = (d.series.get("DCGM_FI_PROF_GR_ENGINE_ACTIVE")
                        or d.series.get("DCGM_FI_DEV_GPU_UTIL"))
                e["memory_used_bytes"] = self.value(used, nd, j) * MIB if used else None
                e["memory_total_bytes"] = int(used.total) * MIB if used else None
                if util is None:
                    e["gpu_util_pct"] = None
                elif util.kind == PCT:
                    e["gpu_util_pct"] = self.value(util, nd, j)
                else:
                    e["gpu_util_pct"] = self.value(util, nd, j) * 100
                e["health"] = None
            else:
                sc = "mig" if d.mig else "gpu"
                used = d.series.get("migmon_%s_memory_used_bytes" % sc)
                tot = d.series.get("migmon_%s_memory_total_bytes" % sc)
                util = d.series.get("migmon_%s_utilization_ratio" % sc)
                e["memory_used_bytes"] = self.value(used, nd, j) if used else None
                e["memory_total_bytes"] = int(tot.value) if tot else None
                e["gpu_util_pct"] = self.value(util, nd, j) * 100 if util else None
                e["health"] = self.verdict(nd, d)
            out.append(e)
        return out

    def truth(self, nodes, extra):
        a = self.args
        tn = []
        for nd in nodes + extra:
            e = {"name": nd.name, "instance": nd.instance,
                 "job": "dcgm" if nd.dcgm_only else "migmon",
                 "hardware": "a100-reconfig" if nd.reconfig else nd.hw,
                 "exporter": None if nd.never_up else ("dcgm-exporter" if nd.dcgm_only
                                                       else "migmon"),
                 "up": not (nd.down or nd.never_up), "down": nd.down, "never_up": nd.never_up,
                 "reconfigured": nd.reconfig, "legacy": nd.legacy,
                 "uuids_of": nd.uuid_of.name if nd.uuid_of else None,
                 "down_since": a.end - a.gap if nd.down else None,
                 # the down node's exporter's last sample
                 "last_sample": (a.end - (a.gap if nd.down else 0) - 0.25
                                 if not (nd.never_up or nd.dcgm_only) else None)}
            if nd.never_up:
                devs, gone = [], []
            elif nd.reconfig:
                devs = self.devices(nd, self.pages["reconfig-after/migmon"], 0)
                old = self.devices(nd, self.pages["reconfig-before/migmon"], self.gap_steps)
                now = {d["uuid"] for d in devs}
                gone = [d for d in old if d["uuid"] not in now]
            else:
                page = self.pages[nd.hw + ("/dcgm" if nd.dcgm_only else "/migmon")]
                devs = self.devices(nd, page, self.gap_steps if nd.down else 0)
                gone = []
            e["gpus"] = sum(d["kind"] == "gpu" for d in devs)
            e["migs"] = sum(d["kind"] == "mig" for d in devs)
            e["devices"] = devs
            e["gone_devices"] = gone
            tn.append(e)
        # the fleet's totals as the monitor's header counts them: every
        # target (one never up among the down ones); of up nodes (a down
        # node's values and health are unknown) the idle leaves (MIG
        # instances, GPUs without instances: utilisation under 1 %), the
        # VRAM of the leaves, the devices whose verdict is warning or
        # action; mig_idle: the idle instances alone
        tot = {"nodes": 0, "down": 0, "gpus": 0, "migs": 0, "mig_idle": 0, "idle": 0,
               "vram_used_bytes": 0, "vram_total_bytes": 0, "not_ok": 0}
        for e in tn:
            tot["nodes"] += 1
            if not e["devices"]:
                tot["down"] += 1  # never up
                continue
            tot["down"] += e["down"]
            parents = {d["parent_uuid"] for d in e["devices"] if d["kind"] == "mig"}
            for d in e["devices"]:
                tot["gpus" if d["kind"] == "gpu" else "migs"] += 1
                if e["down"]:
                    continue
                if d["health"] in ("warning", "action"):
                    tot["not_ok"] += 1
                u = d["gpu_util_pct"]
                leaf = d["kind"] == "mig" or d["uuid"] not in parents
                if d["kind"] == "mig" and u is not None and u < 1:
                    tot["mig_idle"] += 1
                if leaf and u is not None and u < 1:
                    tot["idle"] += 1
                if (d["kind"] == "mig" or d["uuid"] not in parents) and \
                        d["memory_used_bytes"] is not None and d["memory_total_bytes"] is not None:
                    tot["vram_used_bytes"] += d["memory_used_bytes"]
                    tot["vram_total_bytes"] += d["memory_total_bytes"]
        return {"end": a.end, "step": a.step, "samples": a.samples, "gap": a.gap,
                "lookback": a.gap - a.step, "valid_until": a.end + a.gap - a.step,
                "idents_until": a.end - a.gap + 600,
                "targets": len(tn), "totals": tot, "nodes": tn}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, required=True, help="nodes with GPUs")
    ap.add_argument("--dgx", type=int, default=None,
                    help="of them DGX A100s of 8 x 7 MIG instances (default: a tenth)")
    ap.add_argument("--down", type=int, default=0, help="nodes down for the last GAP seconds")
    ap.add_argument("--never-up", type=int, default=0, help="targets that were never up (extra)")
    ap.add_argument("--reconfig", type=int, default=0, help="nodes whose MIG layout changed")
    ap.add_argument("--dup-uuid", type=int, default=0, help="pairs of nodes with the same UUIDs")
    ap.add_argument("--dcgm-only", type=int, default=0, help="nodes running only dcgm-exporter")
    ap.add_argument("--legacy", type=int, default=0,
                    help="nodes whose exporter gives no node summaries")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--step", type=int, default=15, help="seconds between samples")
    ap.add_argument("--gap", type=int, default=None,
                    help="seconds since the stopped series stopped (default 20 steps)")
    ap.add_argument("--end", type=float, default=None, help="the last sample (default: now - 5 s)")
    ap.add_argument("--bin", default=os.path.join(src, "build/mig-gpu-mon"))
    ap.add_argument("--sim-dir", default=os.path.join(src, "build/sim"))
    ap.add_argument("--src", default=src)
    ap.add_argument("--out", required=True, help="the OpenMetrics file ('-': stdout)")
    ap.add_argument("--truth", help="the JSON truth file")
    a = ap.parse_args()
    if a.dgx is None:
        a.dgx = a.nodes // 10
    if a.gap is None:
        a.gap = 20 * a.step
    if a.nodes < 1 or not 0 <= a.dgx <= a.nodes or a.samples < 1 or a.step < 1:
        ap.error("--nodes at least 1, --dgx at most --nodes, --samples and --step at least 1")
    if a.gap % a.step or a.gap < a.step * (a.samples + 1):
        ap.error("--gap: a multiple of --step, more than --samples steps")
    if a.nodes >= 1000000:
        ap.error("--nodes: fewer than 1,000,000 (the UUIDs hold 6 digits)")
    pages = {}
    for hw in HARDWARE:
        text = run_page(a, hw)
        pages[hw + "/migmon"] = Page(text, lambda n: n.startswith("migmon_"), "migmon")
        pages[hw + "/dcgm"] = Page(text, lambda n: n.startswith("DCGM_FI_"), "dcgm")
    if a.end is None:  # once the pages are taken (a sanitizer's build is slow)
        a.end = round(time.time() - 5, 3)
    nodes, extra = plan(a)
    g = Gen(a, pages)
    out = sys.stdout if a.out == "-" else open(a.out, "w", buffering=1 << 20)
    g.write(out, nodes, extra)
    if out is not sys.stdout:
        out.close()
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(g.truth(nodes, extra), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
