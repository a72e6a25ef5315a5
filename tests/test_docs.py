"""`/docs`: Swagger UI from this server alone (no CDN), under the inbox's Content-Security-Policy,
with no inline script; ReDoc, which FastAPI would load from a CDN, is off."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx

from .live import LiveServer


class Assets(HTMLParser):
    """Every URL a page references (src and href), and how many of its scripts have no src."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for key, value in attrs if key in ("src", "href") and value]
        self.inline_scripts += tag == "script" and "src" not in dict(attrs)


def test_docs_use_only_assets_this_server_serves_under_the_inbox_policy(sqlite_server: LiveServer) -> None:
    with httpx.Client(base_url=sqlite_server.url) as client:
        page = client.get("/docs")
        assert page.status_code == 200
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'self'" in policy
        assets = Assets()
        assets.feed(page.text)
        assert assets.inline_scripts == 0
        assert len(assets.urls) >= 4
        for url in assets.urls:
            assert url.startswith("/") and not url.startswith("//"), f"{url} is not on this server"
            served = client.get(url)
            assert served.status_code == 200, url
            assert served.content and served.headers["content-security-policy"] == policy
        script = client.get("/docs/assets/swagger-init.js").text
        assert "SwaggerUIBundle(" in script and "validatorUrl: null" in script  # no call to a validator
        bundle = client.get("/docs/assets/swagger-ui-bundle.js").text
        assert re.search(r'"5\.\d+\.\d+"', bundle), "Swagger UI 5 reads OpenAPI 3.1, which FastAPI writes"
        assert client.get("/openapi.json").json()["openapi"].startswith("3.1")

        assert client.get("/redoc").status_code == 404
        assert client.get("/docs/oauth2-redirect").status_code == 404
        missing = client.get("/docs/assets/redoc.standalone.js")
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"
        assert client.get("/docs/assets/..%2Fcore.py").status_code == 404
