"""A tiny npm registry on 127.0.0.1, in this process: packuments and tarballs built from
files given by the test (so ``pi install npm:...`` runs the real npm, offline)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tarball(files: dict[str, str | bytes], modes: dict[str, int] | None = None) -> bytes:
    """A gzipped npm tarball: every file under ``package/``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            info.mode = (modes or {}).get(name, 0o644)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Registry:
    def __init__(self) -> None:
        self.packages: dict[str, dict[str, Any]] = {}
        self.tarballs: dict[str, bytes] = {}
        self.hits: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                path = self.path.split("?")[0]
                owner.hits.append(path)
                name = path.lstrip("/").replace("%2f", "/").replace("%2F", "/")
                if name in owner.tarballs:
                    body, kind = owner.tarballs[name], "application/octet-stream"
                elif name in owner.packages:
                    body, kind = json.dumps(owner.packages[name]).encode(), "application/json"
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(
        self, manifest: dict[str, Any], files: dict[str, str | bytes], modes: dict[str, int] | None = None
    ) -> None:
        name, version = manifest["name"], manifest["version"]
        data = tarball({"package.json": json.dumps(manifest), **files}, modes)
        path = f"{name}/-/{name.split('/')[-1]}-{version}.tgz"
        self.tarballs[path] = data
        dist = {
            "tarball": f"{self.url}/{path}",
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
            "shasum": hashlib.sha1(data).hexdigest(),  # noqa: S324 - npm's format
        }
        entry = self.packages.setdefault(name, {"name": name, "versions": {}, "dist-tags": {}})
        entry["versions"][version] = {**manifest, "dist": dist}
        entry["dist-tags"]["latest"] = version

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
