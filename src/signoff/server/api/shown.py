"""Documenting an answer's shape without changing how it is sent.

A route that returns `Annotated[dict[str, Any], ShownAs(RequestView)]` is validated and
serialized as the plain `dict[str, Any]` it returns (the same cost, no key dropped), while
`/openapi.json` shows `RequestView`'s schema, its nested models among the components.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema


@dataclass(frozen=True)
class ShownAs:
    """The type whose JSON Schema documents the annotated value (a model, `list[Model]`, `Model | None`)."""

    shape: Any

    def __get_pydantic_json_schema__(self, _: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(TypeAdapter(self.shape).core_schema)


def shown_as(
    shape: Any, status: int = 200, description: str | None = None
) -> dict[int | str, dict[str, Any]]:
    """`responses=` documenting `shape` as the `status` answer of a route that builds its own
    `Response` (the hot endpoints: nothing per request is added)."""
    answer: dict[str, Any] = {"model": shape}
    if description is not None:
        answer["description"] = description
    return {status: answer}
