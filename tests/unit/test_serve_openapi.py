"""The OpenAPI document describes every route the app serves under /api/v1."""

from __future__ import annotations

from starlette.routing import Route

from relore.serve import openapi
from relore.serve.app import Settings, create_app


def test_every_api_route_and_method_is_in_the_openapi_document():
    app = create_app(Settings("postgresql://nobody@/nothing?host=/nonexistent"))
    paths = openapi.document()["paths"]
    for route in app.routes:
        if isinstance(route, Route) and route.path.startswith("/api/v1/"):
            assert route.path in paths, f"{route.path} is served but not documented"
            for method in route.methods - {"HEAD"}:
                assert method.lower() in paths[route.path], (route.path, method)
    assert all(path.startswith("/api/v1/") for path in paths)
