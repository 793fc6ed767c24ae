#!/usr/bin/python3
"""Hostile HTTP clients for tests/e2e/test_serve_limits.sh, on loopback only.

  http_clients.py slow PORT  --conns N --sources K --seconds S --every E
      N connections from 127.0.0.1..127.0.0.K, each sending a request line
      and then one header byte every E seconds, never finishing the request
      (slowloris). A connection the server closes is opened again after
      --reconnect seconds (negative: never).
  http_clients.py flood PORT --conns N --seconds S --max-requests R
      N connections sending GET /metrics back to back (keep-alive), each
      opened again at once when the server closes it, until S seconds or R
      answers.

Both write "ready" to --ready once every connection has been tried (5 s at
most), go on for S seconds more or until SIGTERM, and write a JSON summary
to --out (or stdout).
"""
import argparse
import errno
import json
import selectors
import signal
import socket
import sys
import time

HOST = "127.0.0.1"  # the server's address; clients bind 127.0.0.1..127.0.0.K
REQUEST_LINE = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Conn:
    __slots__ = ("sock", "i", "connected", "t_open", "next_send", "buf", "need", "status")

    def __init__(self, i):
        self.sock = None
        self.i = i
        self.connected = False
        self.t_open = 0.0
        self.next_send = 0.0
        self.buf = b""
        self.need = -1  # body bytes still to read; -1: reading headers
        self.status = 0


class Clients:
    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.conns = [Conn(i) for i in range(a.conns)]
        self.stats = {
            "mode": a.mode,
            "conns": a.conns,
            "connects": 0,
            "connect_errors": 0,
            "server_closed": 0,
            "min_life_closed_s": 0.0,
            "max_life_closed_s": 0.0,
            "answers": {},
        }
        self.answers = 0
        self.reopen = []  # (when, conn)
        self.stopping = False

    def open(self, c, now):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind(("127.0.0.%d" % (1 + c.i % self.a.sources), 0))
        rc = s.connect_ex((HOST, self.a.port))
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            self.stats["connect_errors"] += 1
            self.reopen.append((now + 0.1, c))
            return
        c.sock, c.connected, c.buf, c.need = s, False, b"", -1
        self.sel.register(s, selectors.EVENT_WRITE, c)

    def drop(self, c, now, by_server):
        self.sel.unregister(c.sock)
        c.sock.close()
        c.sock = None
        if by_server and c.connected:
            self.stats["server_closed"] += 1
            life = now - c.t_open
            st = self.stats
            if st["server_closed"] == 1 or life < st["min_life_closed_s"]:
                st["min_life_closed_s"] = life
            if life > st["max_life_closed_s"]:
                st["max_life_closed_s"] = life
        c.connected = False
        delay = 0.0 if self.a.mode == "flood" else self.a.reconnect
        if delay >= 0 and not self.stopping:
            self.reopen.append((now + delay, c))

    def send(self, c, data, now):
        try:
            c.sock.send(data)
            return True
        except OSError:
            self.drop(c, now, True)
            return False

    def on_connected(self, c, now):
        err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self.stats["connect_errors"] += 1
            self.drop(c, now, False)
            return
        c.connected, c.t_open = True, now
        self.stats["connects"] += 1
        self.sel.modify(c.sock, selectors.EVENT_READ, c)
        if self.a.mode == "slow":
            if self.send(c, REQUEST_LINE, now):
                c.next_send = now + self.a.every * (1 + c.i % 10) / 10
        else:
            self.send(c, REQUEST, now)

    def on_readable(self, c, now):
        try:
            data = c.sock.recv(262144)
        except OSError:
            data = b""
        if not data:
            self.drop(c, now, True)
            return
        if self.a.mode == "slow":
            return  # an error page before the close: the close follows
        while data:
            if c.need < 0:
                c.buf += data
                end = c.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head, data = c.buf[:end], c.buf[end + 4 :]
                c.buf = b""
                lines = head.split(b"\r\n")
                c.status = int(lines[0].split()[1])
                c.need = 0
                for ln in lines[1:]:
                    k, _, v = ln.partition(b":")
                    if k.strip().lower() == b"content-length":
                        c.need = int(v)
            take = min(c.need, len(data))
            c.need -= take
            data = data[take:]
            if c.need == 0:
                key = str(c.status)
                self.stats["answers"][key] = self.stats["answers"].get(key, 0) + 1
                self.answers += 1
                c.need = -1
                if self.a.max_requests and self.answers >= self.a.max_requests:
                    self.stopping = True
                if self.stopping:
                    return
                if not self.send(c, REQUEST, now):
                    return

    def run(self):
        a = self.a
        t0 = time.monotonic()
        for c in self.conns:
            self.open(c, t0)
        t_ready = None
        while True:
            now = time.monotonic()
            if (t_ready is not None and now - t_ready >= a.seconds) or self.stopping:
                break
            if t_ready is None and (
                all(c.connected or c.sock is None for c in self.conns) or now - t0 > 5
            ):
                if a.ready:
                    with open(a.ready, "w") as f:
                        f.write("ready\n")
                t_ready = now
            if self.reopen:
                due = [r for r in self.reopen if r[0] <= now]
                self.reopen = [r for r in self.reopen if r[0] > now]
                for _, c in due:
                    self.open(c, now)
            for key, ev in self.sel.select(timeout=0.05):
                c = key.data
                if c.sock is None:
                    continue
                if not c.connected:
                    self.on_connected(c, now)
                elif ev & selectors.EVENT_READ:
                    self.on_readable(c, now)
            if a.mode == "slow":
                for c in self.conns:
                    if c.connected and c.next_send <= now:
                        if self.send(c, b"a", now):
                            c.next_send = now + a.every
        now = time.monotonic()
        self.stopping = True
        open_now = [c for c in self.conns if c.connected]
        self.stats["open_at_end"] = len(open_now)
        self.stats["max_age_open_s"] = max((now - c.t_open for c in open_now), default=0.0)
        self.stats["seconds"] = now - t0
        for c in self.conns:
            if c.sock is not None:
                c.sock.close()
        for k in ("min_life_closed_s", "max_life_closed_s", "max_age_open_s", "seconds"):
            self.stats[k] = round(self.stats[k], 3)
        return self.stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["slow", "flood"])
    ap.add_argument("port", type=int)
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--sources", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--every", type=float, default=2)
    ap.add_argument("--reconnect", type=float, default=0.5)
    ap.add_argument("--max-requests", type=int, default=0)
    ap.add_argument("--ready")
    ap.add_argument("--out")
    a = ap.parse_args()
    clients = None

    def stop(sig, frame):
        if clients:
            clients.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not 1 <= a.sources <= 250:
        ap.error("--sources: 1 to 250 (127.0.0.1 to 127.0.0.250)")
    clients = Clients(a)
    stats = clients.run()
    text = json.dumps(stats, sort_keys=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    sys.exit(main())
