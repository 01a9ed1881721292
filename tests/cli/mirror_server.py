"""A local HTTP server for the install tests: serves a directory in NVIDIA's mirror layout on
127.0.0.1 (port chosen by the OS, printed as the first line of stdout), with directory indexes,
HTTP Range support, and fault injection read from a JSON file on every request:

  { "/cuda/redist/x.tar.xz": {"drop_after": 4096, "times": 1},   # close the connection mid-body
    "/cuda/redist/y.tar.xz": {"corrupt_at": 100},                # flip one byte in the body
    "/cuda/redist/z.tar.xz": {"status": 404},                    # answer with this status
    "/cuda/redist/s.tar.xz": {"stall_after": 1000, "stall_seconds": 5, "times": 1},
    "/cuda/redist/r.tar.xz": {"no_range": true},                  # ignore Range headers
    "/cuda/redist/d.tar.xz": {"delay": 0.2},                      # pause before each 64 KiB
    "/cuda/redist/e.tar.xz": {"extra": 1000},       # 1000 more bytes, announced in Content-Length
    "/cuda/redist/": {"endless": true},             # after the body, zeros forever (~6 MB/s)
    "/cuda/redist/m.json": {"trickle": 2048} }      # after the body, 2048 spaces a second forever

"endless" and "trickle" answers carry no Content-Length and never end; they apply to files and
directory indexes alike.

"times" limits how many requests the fault applies to (default: all). Every request is appended
to <faults file>.log as "METHOD PATH RANGE" so tests can see resumes happen.
Usage: python3 mirror_server.py ROOT FAULTS_JSON"""

import html
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

ROOT = os.path.realpath(sys.argv[1])
FAULTS = sys.argv[2]
_hits = {}
_lock = threading.Lock()
CHUNK = 64 * 1024


def fault_for(path):
    try:
        with open(FAULTS) as f:
            faults = json.load(f)
    except (OSError, ValueError):
        return {}
    fault = faults.get(path)
    if not fault:
        return {}
    with _lock:
        _hits[path] = _hits.get(path, 0) + 1
        if "times" in fault and _hits[path] > fault["times"]:
            return {}
    return fault


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def serve(self, head):
        path = unquote(urlparse(self.path).path)
        with open(FAULTS + ".log", "a") as log:
            log.write(f"{self.command} {path} {self.headers.get('Range', '-')}\n")
        fault = fault_for(path)
        if "status" in fault:
            return self.send_plain(fault["status"], "injected\n")
        local = os.path.realpath(os.path.join(ROOT, path.lstrip("/")))
        if not (local == ROOT or local.startswith(ROOT + os.sep)):
            return self.send_plain(403, "forbidden\n")
        if os.path.isdir(local):
            return self.send_index(path, local, fault)
        if not os.path.isfile(local):
            return self.send_plain(404, "not found\n")
        if "endless" in fault or "trickle" in fault or "extra" in fault:
            with open(local, "rb") as f:
                return self.send_unbounded(f.read(), fault)
        self.send_file(local, fault, head)

    def send_plain(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_unbounded(self, data, fault):
        """The body, then what the fault adds: `extra` announced bytes, or filler that never ends."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if "extra" in fault:
            self.send_header("Content-Length", str(len(data) + fault["extra"]))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(data)
            if "extra" in fault:
                self.wfile.write(bytes(fault["extra"]))
                return
            while True:
                self.wfile.write(b" " * fault["trickle"] if "trickle" in fault else bytes(CHUNK))
                self.wfile.flush()
                time.sleep(1 if "trickle" in fault else 0.01)
        except (BrokenPipeError, ConnectionResetError):
            return

    def send_index(self, path, local, fault):
        if not path.endswith("/"):
            self.send_response(301)
            self.send_header("Location", path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        rows = "".join(f'<a href="{html.escape(n)}{"/" if os.path.isdir(os.path.join(local, n)) else ""}">'
                       f"{html.escape(n)}</a>\n" for n in sorted(os.listdir(local)))
        body = f"<html><head><title>Index of {html.escape(path)}</title></head><body><pre>\n{rows}</pre></body></html>\n"
        data = body.encode()
        if "endless" in fault or "trickle" in fault:
            return self.send_unbounded(data, fault)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_file(self, local, fault, head):
        size = os.path.getsize(local)
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and not fault.get("no_range"):
            first = rng[6:].split("-")[0]
            start = int(first) if first else 0
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if head:
            return
        with open(local, "rb") as f:
            f.seek(start)
            self.stream(f, start, fault)

    def stream(self, f, offset, fault):
        sent = offset
        while True:
            data = f.read(CHUNK)
            if not data:
                return
            if "corrupt_at" in fault and sent <= fault["corrupt_at"] < sent + len(data):
                i = fault["corrupt_at"] - sent
                data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
            if "drop_after" in fault and sent + len(data) > fault["drop_after"]:
                keep = max(0, fault["drop_after"] - sent)
                self.wfile.write(data[:keep])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if "stall_after" in fault and sent + len(data) > fault["stall_after"]:
                keep = max(0, fault["stall_after"] - sent)
                self.wfile.write(data[:keep])
                self.wfile.flush()
                time.sleep(fault.get("stall_seconds", 5))
                self.close_connection = True
                return
            if "delay" in fault:
                time.sleep(fault["delay"])
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return
            sent += len(data)


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients the tests kill mid-transfer reset their connections: expected, not news


def main():
    server = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
