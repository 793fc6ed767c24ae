#!/usr/bin/python3
"""An HTTP proxy that counts what Prometheus sends a client.

    countproxy.py UPSTREAM-URL PORT-FILE LOG-FILE

Listens on a free port of 127.0.0.1 (written to PORT-FILE once listening),
forwards every request to UPSTREAM-URL (http only) and streams the answer
back as it comes. Per request, one JSON line in LOG-FILE when it ends:
"start", "end" (monotonic seconds), "path", "query" (the PromQL, from the
URL or a form body), "status", "wire" (the answer's bytes as relayed:
status line, headers, chunk framing and the body as Prometheus encoded
it), "encoding" (its Content-Encoding), "enc" (that body alone: compressed
when the client accepts it, as the monitor's libcurl does), "body" (the
body decoded), "cut" (true when the client closed the connection before
the end, as the monitor does at its bound on an answer or its deadline).
LOG-FILE.inflight holds the count of requests in flight (a bench waits
for a round in flight to send its key).
"""

import http.client
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
import zlib

UP = urllib.parse.urlsplit(sys.argv[1])
PORT_FILE, LOG = sys.argv[2], sys.argv[3]
lock = threading.Lock()
inflight = [0]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-connection", "content-length"}


def note_inflight(d):
    with lock:
        inflight[0] += d
        with open(LOG + ".inflight.tmp", "w") as f:
            f.write(str(inflight[0]))
        os.rename(LOG + ".inflight.tmp", LOG + ".inflight")


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def relay(self, method):
        start = time.monotonic()
        note_inflight(1)
        rec = {"path": urllib.parse.urlsplit(self.path).path, "status": 0, "wire": 0,
               "encoding": None, "enc": 0, "body": 0, "cut": False}
        body = None
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            body = self.rfile.read(n)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if body and "form-urlencoded" in (self.headers.get("Content-Type") or ""):
            q.update(urllib.parse.parse_qs(body.decode("utf-8", "replace")))
        rec["query"] = (q.get("query") or [""])[0]
        up = http.client.HTTPConnection(UP.hostname, UP.port or 80, timeout=600)
        try:
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            up.request(method, self.path, body=body, headers=hdrs)
            r = up.getresponse()
            rec["status"] = r.status
            # Prometheus answers libcurl's "deflate, gzip" with the first it
            # knows (deflate: zlib's format); 32 + MAX_WBITS reads either
            ce = (r.getheader("Content-Encoding") or "").strip()
            rec["encoding"] = ce or None
            dec = zlib.decompressobj(32 + zlib.MAX_WBITS) if ce in ("gzip", "deflate") else None
            head = "HTTP/1.1 %d %s\r\n" % (r.status, r.reason)
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    head += "%s: %s\r\n" % (k, v)
            head += "Transfer-Encoding: chunked\r\n\r\n"
            self.wfile.write(head.encode("latin-1"))
            rec["wire"] += len(head)
            while True:
                chunk = r.read1(1 << 16) if hasattr(r, "read1") else r.read(1 << 16)
                if not chunk:
                    break
                frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
                self.wfile.write(frame)
                rec["wire"] += len(frame)
                rec["enc"] += len(chunk)
                rec["body"] += len(dec.decompress(chunk)) if dec else len(chunk)
            self.wfile.write(b"0\r\n\r\n")
            rec["wire"] += 5
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
            rec["cut"] = True
            self.close_connection = True
        finally:
            up.close()
            rec["start"], rec["end"] = start, time.monotonic()
            note_inflight(-1)
            with lock, open(LOG, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def do_GET(self):
        self.relay("GET")

    def do_POST(self):
        self.relay("POST")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that goes away between requests (the monitor killed):
        # nothing to count, nothing to report
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


srv = Server(("127.0.0.1", 0), Proxy)
open(LOG, "w").close()
note_inflight(0)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
srv.serve_forever()
