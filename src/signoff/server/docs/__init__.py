"""The API's documentation at `/docs`: Swagger UI, its files served from the fastapi-offline
package (nothing from a CDN: the page works offline and runs no third-party code on this
origin), under the inbox's Content-Security-Policy. Swagger UI's start-up script is a file here,
`swagger-init.js`, since the policy allows no inline script. FastAPI's ReDoc page is turned off
(ReDoc injects inline styles, which the policy refuses).

fastapi-offline rather than swagger-ui-bundle: the latter ships Swagger UI 4, which cannot read
the OpenAPI 3.1 that FastAPI writes.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.responses import FileResponse, HTMLResponse

from ...errors import NotFound
from ..inbox.rendering import PAGE_HEADERS

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
INIT_SCRIPT = Path(__file__).with_name("swagger-init.js")
SWAGGER_FILES = frozenset({"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"})
"""What the page uses of the package's files (not its ReDoc)."""
ASSET_HEADERS = {**PAGE_HEADERS, "Cache-Control": "public, max-age=3600"}


def docs_page(prefix: str, title: str, openapi_url: str) -> str:
    assets = escape(prefix + ASSETS_PATH)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<link rel="icon" type="image/png" href="{assets}/favicon.png">
<link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{escape(prefix + openapi_url)}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="{assets}/swagger-init.js"></script>
</body>
</html>
"""


def install_docs(app: FastAPI) -> None:
    """Serve Swagger UI at `/docs` for the app's `/openapi.json`."""
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs(http: HttpRequest) -> HTMLResponse:
        prefix = http.scope.get("root_path", "").rstrip("/")
        return HTMLResponse(docs_page(prefix, f"{app.title} API", openapi_url), headers=PAGE_HEADERS)

    @app.get(ASSETS_PATH + "/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        if name == INIT_SCRIPT.name:
            return FileResponse(INIT_SCRIPT, media_type="text/javascript", headers=ASSET_HEADERS)
        if name not in SWAGGER_FILES:
            raise NotFound(f"no documentation file {name!r}")
        return FileResponse(Path(str(files("fastapi_offline"))) / "static" / name, headers=ASSET_HEADERS)
