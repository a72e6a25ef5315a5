"""nginx from Debian, run by a test with the repository's `deploy/nginx/` configuration.

The site file's `upstream` block is used as written with the test's replica ports in place of
the example's, and its `signoff-proxy.conf` is included verbatim; only the TLS server (a
certificate the test does not have) becomes a plain loopback listener.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def upstream_block(ports: list[int]) -> str:
    """The site file's upstream block, its example servers replaced by `ports` (same options)."""
    site = (DEPLOY / "signoff.conf").read_text(encoding="utf-8")
    match = re.search(r"^upstream signoff_replicas \{.*?^\}", site, flags=re.DOTALL | re.MULTILINE)
    assert match, "deploy/nginx/signoff.conf has no upstream signoff_replicas block"
    block = match.group(0)
    examples = re.findall(r"^\s*server 127\.0\.0\.1:\d+ (.*);$", block, flags=re.MULTILINE)
    assert examples, "the upstream block names no replica"
    options = examples[0]
    body = "".join(f"    server 127.0.0.1:{port} {options};\n" for port in ports)
    return re.sub(r"(^\s*server 127\.0\.0\.1:\d+ .*;\n)+", body, block, count=1, flags=re.MULTILINE)


class Nginx:
    def __init__(self, directory: Path, port: int, replica_ports: list[int]) -> None:
        self.directory = directory
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.conf = directory / "nginx.conf"
        for temp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (directory / temp).mkdir(parents=True, exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""
        self.conf.write_text(
            f"""{user}worker_processes 1;
daemon off;
pid {directory}/nginx.pid;
error_log {directory}/error.log info;
events {{ worker_connections 1024; }}
http {{
    access_log {directory}/access.log;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
{upstream_block(replica_ports)}
    server {{
        listen 127.0.0.1:{port};
        include {DEPLOY / "signoff-proxy.conf"};
    }}
}}
""",
            encoding="utf-8",
        )
        self.process: subprocess.Popen[bytes] | None = None

    def check(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [NGINX, "-t", "-c", str(self.conf), "-p", str(self.directory)], capture_output=True, text=True
        )

    def __enter__(self) -> Nginx:
        with (self.directory / "nginx.out").open("wb") as log:
            self.process = subprocess.Popen(
                [NGINX, "-c", str(self.conf), "-p", str(self.directory)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 15
        while True:
            try:
                httpx.get(self.url, timeout=1)
                return self
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, f"nginx exited: {(self.directory / 'error.log').read_text()}"
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
