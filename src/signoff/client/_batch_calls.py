"""The REST call that decides a batch (`POST /v1/requests/decide`), without I/O."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..batch import BatchDecisionType, BatchFilter, BatchResult, check_batch_ids
from ..errors import InvalidInput
from ._wire import Call


def decide_many(
    selection: BatchFilter | Sequence[str], decision: BatchDecisionType, reason: str | None
) -> Call[BatchResult]:
    body: dict[str, Any] = {"type": decision}
    if reason is not None:
        body["reason"] = reason
    if isinstance(selection, BatchFilter):
        body["filter"] = selection.to_dict()
    elif isinstance(selection, str):
        raise InvalidInput("name the requests as a list of ids, or give a BatchFilter")
    else:
        body["ids"] = list(check_batch_ids(list(selection)))
    return Call("POST", "/v1/requests/decide", lambda answer: BatchResult.from_dict(answer.data), body=body)
