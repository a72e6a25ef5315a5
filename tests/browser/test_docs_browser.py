"""`/docs` in a real browser (headless Debian Chromium, conftest's `browser`): Swagger UI renders
the API's operations from this server alone, under the inbox's Content-Security-Policy, with no
request leaving the origin and no policy violation."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from signoff.store import Store

from ..live import LiveServer
from .test_inbox_browser import expect

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


def test_docs_render_the_operations_from_this_server_alone(browser: Any, sqlite_store: Store) -> None:
    with LiveServer(sqlite_store) as server:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.add_init_script(RECORD_VIOLATIONS)
        fetched: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: fetched.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        response = page.goto(server.url + "/docs")
        assert response is not None and response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]

        expect(page.locator(".swagger-ui .info .title")).to_contain_text("signoff")
        operations = page.locator(".opblock")
        expect(operations.first).to_be_visible()
        decide = page.locator('.opblock-summary-path[data-path="/v1/requests/{request_id}/decision"]')
        expect(decide).to_be_visible()
        assert operations.count() > 20

        page.locator('.opblock-summary-path[data-path="/healthz"]').click()  # an operation opens
        expect(page.locator(".opblock.is-open .responses-wrapper")).to_contain_text("503")

        origin = urlsplit(server.url).netloc
        assert fetched and all(
            urlsplit(url).netloc == origin for url in fetched if not url.startswith("data:")
        ), fetched
        assert page.evaluate("window.__violations") == []
        assert errors == []
        context.close()
