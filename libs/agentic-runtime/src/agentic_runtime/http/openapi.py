"""A service's OpenAPI document: paths, methods and path parameters as FastAPI derives them from the routes (so
they cannot drift), plus what routes that read their own bodies cannot declare: request bodies, query parameters
and authentication, from a table the service keeps next to its routes."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from agentic_core.json_types import Schema
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response

# The probes (agentic_runtime.http.service.add_probe_routes) answer without credentials.
_PROBES: dict[tuple[str, str], Schema] = {("get", path): {"security": []} for path in ("/health", "/ready", "/metrics")}


def json_body(schema: Schema, required: bool = True) -> Schema:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def query(name: str, schema: Schema, description: str = "") -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def header(name: str, schema: Schema, description: str = "", required: bool = True) -> Schema:
    return {"name": name, "in": "header", "required": required, "schema": schema, "description": description}


def error_responses(shape: Schema) -> Schema:
    """Every operation's error answer, in the shape of its path."""
    return {"4XX": {"description": "The request was refused.", "content": {"application/json": {"schema": shape}}},
            "5XX": {"description": "The service failed.", "content": {"application/json": {"schema": shape}}}}


def build_document(app: FastAPI, version: str, operations: Mapping[tuple[str, str], Schema],
                   errors: Mapping[str, Schema], security_schemes: Mapping[str, Schema] | None = None) -> Schema:
    """FastAPI's document for `app`, each `(method, path)` operation updated with its entry in `operations`
    (a `parameters` list is appended to the derived one). An entry for a route the app does not serve is an error.
    `errors` maps a path prefix to the shape of its errors (the longest prefix wins; '' for the rest)."""
    document = get_openapi(title=app.title, version=version, routes=app.routes, description=app.description)
    for path, methods in document["paths"].items():
        shape = errors[max((prefix for prefix in errors if path.startswith(prefix)), key=len)]
        for operation in methods.values():
            operation["responses"].pop("422", None)  # FastAPI's own validation shape: ours are 400s in `shape`
            operation["responses"].update(error_responses(shape))
    document.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
    document.get("components", {}).get("schemas", {}).pop("ValidationError", None)
    for (method, path), extra in {**_PROBES, **operations}.items():
        operation = document["paths"].get(path, {}).get(method)
        if operation is None and (method, path) in _PROBES and (method, path) not in operations:
            continue  # a probe this service serves elsewhere (the gateway's /metrics)
        if operation is None:
            raise KeyError(f"{method.upper()} {path} is documented but not served")
        operation.setdefault("parameters", []).extend(extra.get("parameters", []))
        operation.update({key: value for key, value in extra.items() if key != "parameters"})
    if security_schemes:
        document.setdefault("components", {})["securitySchemes"] = dict(security_schemes)
        document["security"] = [{name: []} for name in security_schemes]
    return document


def serve_document(app: FastAPI, document: Schema) -> None:
    """`GET /openapi.json`, unauthenticated, the document serialised once (FastAPI's own would regenerate it)."""
    content = orjson.dumps(document)

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi_document() -> Response:
        return Response(content=content, media_type="application/json")
