"""Throw-away installed packages for the plugin tests: modules and a `*.dist-info` directory with
their entry points, as pip would lay them out, in a folder a test puts on `sys.path` or a
subprocess's PYTHONPATH; and the README's plugin example (examples/custom_channel.py and
custom_adapter.py), run as such a package."""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import httpx

from signoff.channels import ChannelRegistry, parse_config
from signoff.store import Store

from .live import LiveServer
from .receivers import Receiver
from .test_outbox import QUICK, ask


def install(site: Path, dist: str, version: str, modules: dict[str, str], entry_points: str) -> None:
    """Lay the package out in `site`; a package of the same name an earlier test imported (from its
    own folder) is forgotten, so that this one is what an import finds."""
    packages = {Path(path).parts[0].removesuffix(".py") for path in modules}
    for name in [name for name in sys.modules if name.split(".")[0] in packages]:
        del sys.modules[name]
    importlib.invalidate_caches()
    for path, text in modules.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


def run_signoff(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `signoff` command with `site` on its PYTHONPATH."""
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "signoff.cli", *args],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def install_readme_example(site: Path, pyproject: str, channel_module: str, adapter_module: str) -> None:
    """The README's package: its entry points (from the pyproject block), its channel module and
    its adapter module (examples/custom_channel.py and examples/custom_adapter.py)."""
    groups = tomllib.loads(pyproject)["project"]["entry-points"]
    entry_points = "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in points.items())
        for group, points in groups.items()
    )
    modules = {
        "acme_signoff/__init__.py": "",
        "acme_signoff/channel.py": channel_module,
        "acme_signoff/adapter.py": adapter_module,
    }
    install(site, "acme-signoff", "1.0", modules, entry_points)


def readme_channel_round_trip(store: Store) -> tuple[list[dict[str, object]], str, list[int]]:
    """A running server with the README's channel (its package on sys.path): a request sent to
    alice through it, a forged answer and then a signed one posted back. What Acme Pager got,
    the request's status, and the callbacks' HTTP statuses."""
    store.add_user("alice", role="member", actor="test")
    store.set_address("alice", "acme", "U-ALICE", actor="test")
    with Receiver() as pager:
        settings = {"kind": "acme", "url": pager.url, "signing_secret": "acme-secret"}
        registry = ChannelRegistry.from_configs(parse_config({"pager": settings}))
        with LiveServer(store, QUICK, channels=registry) as live:
            request_id = ask(store, approvers=("alice",), channels=("pager",))
            pager.wait_for(1)
            body = json.dumps({"from": "U-ALICE", "request": request_id, "decision": "approve"}).encode()
            signature = hmac.new(b"acme-secret", body, hashlib.sha256).hexdigest()
            statuses = [
                httpx.post(f"{live.url}/channels/pager/callback", content=body, headers=headers).status_code
                for headers in ({"x-acme-signature": "0" * 64}, {"x-acme-signature": signature})
            ]
            got = pager.wait_for(2)
    request = store.get_request(request_id)
    assert request is not None
    return [json.loads(post.body) for post in got], request.status, statuses
