"""A local PyPI-compatible index for the tests of `--source pypi`: serves the wheels in a
directory through the simple repository API on 127.0.0.1 (port chosen by the OS, printed as the
first line of stdout). Project pages are PEP 691 JSON when the client's Accept header asks for
it, PEP 503 HTML otherwise; files are served from /files/ with HTTP Range support.
/whl/<build>/<project>/ answers as /simple/<project>/ does: the per-build indexes PyTorch keeps
(download.pytorch.org/whl/cu124).

Behaviour is read from a JSON control file on every request:

  { "format": "html",                  # "html" or "json": answer only in that form
    "relative_links": true,            # HTML links as "../../files/x.whl" instead of absolute
    "wrong_sha256": ["x.whl"],         # list a wrong digest for these files
    "no_sha256": ["x.whl"],            # list no digest for these files
    "omit": ["x.whl"],                 # leave these files off the project pages
    "status": {"/simple/p/": 404},     # answer these paths with this status
    "redirect_files": true,            # file links go through /redirect/, a 302 to /files/
    "redirect_pages": true,            # /simple/<p>/ answers 301 to /moved/simple/<p>/
    "sizes": {"x.whl": -5},            # the JSON "size" listed for these files, as given
    "pages": {"/simple/p/": "/tmp/f"},   # answer these paths with the bytes of this file
    "metadata": false,                 # list no PEP 658 .metadata file at all (HTTP range reads then)
    "no_metadata": ["x.whl"] }           # no PEP 658 x.whl.metadata for these files (404)

Each wheel's METADATA is served as /files/<wheel>.metadata (PEP 658), and the pages say so
(JSON "core-metadata", HTML data-core-metadata), unless metadata is false or no_metadata names it.

Every request is appended to <control file>.log as "METHOD PATH ACCEPT", with " RANGE" after it
when the request asked for a byte range.
Usage: python3 pypi_index.py WHEEL_DIR CONTROL_JSON"""

import hashlib
import html
import json
import os
import re
import sys
import zipfile
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlparse

from mirror_server import QuietServer  # a client that gave up mid-transfer is no news

ROOT = os.path.realpath(sys.argv[1])
CONTROL = sys.argv[2]
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def control():
    try:
        with open(CONTROL) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(filename):
    return normalize(filename.split("-")[0])


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def has_metadata(settings, wheel):
    return settings.get("metadata", True) and wheel not in settings.get("no_metadata", [])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    head = False  # a HEAD request: the headers a GET would get, no body

    def do_HEAD(self):  # uv asks for a wheel's headers before it fetches it
        self.head = True
        self.answer()

    def do_GET(self):
        self.head = False  # one handler serves every request of a kept-alive connection
        self.answer()

    def answer(self):
        path = unquote(urlparse(self.path).path)
        with open(CONTROL + ".log", "a") as log:
            asked = f" {self.headers['Range']}" if self.headers.get("Range") else ""
            log.write(f"{'HEAD' if self.head else 'GET'} {path} {self.headers.get('Accept', '-')}{asked}\n")
        settings = control()
        if path in settings.get("status", {}):
            return self.send(settings["status"][path], b"injected\n", "text/plain")
        if path in settings.get("pages", {}):
            with open(settings["pages"][path], "rb") as f:
                body = f.read()
            return self.send(200, body, JSON_TYPE if body.lstrip().startswith(b"{") else "text/html")
        if path.startswith("/redirect/"):
            return self.send(302, b"", "text/plain", {"Location": "/files/" + path[len("/redirect/"):]})
        if path.startswith("/files/") and path.endswith(".whl.metadata"):
            return self.send_metadata(os.path.basename(path)[:-len(".metadata")], settings)
        if path.startswith("/files/"):
            return self.send_file(os.path.join(ROOT, os.path.basename(path)))
        moved = path.startswith("/moved/simple/")
        if path.startswith("/simple/") and settings.get("redirect_pages") and not moved:
            return self.send(301, b"", "text/plain", {"Location": "/moved" + path})
        parts = [p for p in path.split("/") if p]
        if moved:
            parts = parts[1:]
        if len(parts) == 3 and parts[0] == "whl":  # a per-build index as PyTorch's: /whl/cu124/torch/
            parts = ["simple", parts[2]]
        if len(parts) == 2 and parts[0] == "simple":
            if not path.endswith("/"):
                return self.send(301, b"", "text/plain", {"Location": path + "/"})
            return self.send_project(parts[1], settings, depth=len([p for p in path.split("/") if p]))
        return self.send(404, b"not found\n", "text/plain")

    def send(self, status, body, content_type, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not self.head:
            self.wfile.write(body)

    def files_of(self, project, settings):
        names = sorted(n for n in os.listdir(ROOT) if n.endswith(".whl") and project_of(n) == project)
        for name in names:
            if name in settings.get("omit", []):
                continue
            digest = sha256_of(os.path.join(ROOT, name))
            if name in settings.get("wrong_sha256", []):
                digest = hashlib.sha256(b"something else").hexdigest()
            if name in settings.get("no_sha256", []):
                digest = None
            yield name, digest

    def send_project(self, project, settings, depth):
        if normalize(project) != project:
            return self.send(301, b"", "text/plain", {"Location": f"/simple/{normalize(project)}/"})
        files = list(self.files_of(project, settings))
        if not files:
            return self.send(404, b"no such project\n", "text/plain")
        prefix = "/redirect/" if settings.get("redirect_files") else "/files/"
        wants_json = JSON_TYPE in self.headers.get("Accept", "")
        form = settings.get("format") or ("json" if wants_json else "html")
        if form == "json":
            body = {"meta": {"api-version": "1.1"}, "name": project, "files": [
                {"filename": n, "url": prefix + n, "hashes": {"sha256": d} if d else {},
                 "size": settings.get("sizes", {}).get(n, os.path.getsize(os.path.join(ROOT, n))),
                 **({"core-metadata": True} if has_metadata(settings, n) else {})}
                for n, d in files]}
            return self.send(200, json.dumps(body).encode(), JSON_TYPE)
        host = "" if settings.get("relative_links") else f"http://{self.headers['Host']}"
        base = "/".join([".."] * depth) if settings.get("relative_links") else host
        rows = "".join(f'    <a href="{base}{prefix}{html.escape(n)}{"#sha256=" + d if d else ""}"'
                       f'{" data-core-metadata=true" if has_metadata(settings, n) else ""}>'
                       f"{html.escape(n)}</a><br/>\n" for n, d in files)
        body = (f"<!DOCTYPE html>\n<html>\n  <head><title>Links for {project}</title></head>\n"
                f"  <body>\n    <h1>Links for {project}</h1>\n{rows}  </body>\n</html>\n")
        return self.send(200, body.encode(), "text/html")

    def send_metadata(self, wheel, settings):
        """A wheel's *.dist-info/METADATA member, as PyPI serves it beside the wheel (PEP 658)."""
        local = os.path.join(ROOT, wheel)
        if not has_metadata(settings, wheel) or not os.path.isfile(local):
            return self.send(404, b"not found\n", "text/plain")
        with zipfile.ZipFile(local) as archive:
            name = next((n for n in archive.namelist()
                         if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)), None)
            body = archive.read(name) if name else None
        if body is None:
            return self.send(404, b"no METADATA\n", "text/plain")
        return self.send(200, body, "application/octet-stream")

    def send_file(self, local):
        if not os.path.isfile(local):
            return self.send(404, b"not found\n", "text/plain")
        size = os.path.getsize(local)
        start, end = 0, size - 1
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            first, _, last = rng[6:].split(",")[0].strip().partition("-")
            if first:  # "a-" or "a-b"
                start, end = int(first), min(int(last), size - 1) if last else size - 1
            else:  # "-n": the last n bytes (what a reader of a zip's directory asks)
                start = max(size - int(last), 0)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end + 1 - start))
        self.end_headers()
        if self.head:
            return
        with open(local, "rb") as f:
            f.seek(start)
            left = end + 1 - start
            try:
                while left > 0:
                    block = f.read(min(1 << 16, left))
                    if not block:
                        break
                    self.wfile.write(block)
                    left -= len(block)
            except (BrokenPipeError, ConnectionResetError):
                return


def main():
    server = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
