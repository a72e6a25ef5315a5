"""What `Client` offers for executions (claims, leases, results, in_doubt calls run again): the
same methods, with the same names, as the store's, so a gate runs a call the same way over either."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from ..execution import Claim, current_owner
from ..requests import Execution, ExecutionStatus
from . import _execution_calls as execution_calls
from ._wire import Call

T = TypeVar("T")


class ExecutionCalls:
    """Mixed into `Client`, which sends the calls."""

    def _send(self, call: Call[T], *, if_applied: Callable[[], T | None] | None = None) -> T:
        raise NotImplementedError

    def claim_execution(
        self,
        request_id: str,
        *,
        lease: timedelta,
        args_digest: str,
        idempotent: bool = False,
        owner: dict[str, Any] | None = None,
    ) -> Claim:
        """Claim for this process: the server judges its liveness by this host, pid and lease,
        and refuses the claim if `args_digest` is not that of the decided args."""
        owner = owner if owner is not None else current_owner()
        return self._send(
            execution_calls.claim_execution(
                request_id, lease=lease, args_digest=args_digest, idempotent=idempotent, owner=owner
            )
        )

    def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
        return self._send(execution_calls.renew_lease(request_id, token, lease=lease))

    def finish_execution(
        self, request_id: str, token: str, *, succeeded: bool, result: Any = None, error: str | None = None
    ) -> Execution:
        wanted = ExecutionStatus.SUCCEEDED if succeeded else ExecutionStatus.FAILED

        def finished_before() -> Execution | None:  # the answer to an applied attempt was lost
            execution = self.get_execution(request_id)
            if execution is None or execution.status is not wanted:
                return None
            same = execution.result == result if succeeded else execution.error == error
            return execution if same else None

        return self._send(
            execution_calls.finish_execution(
                request_id, token, succeeded=succeeded, result=result, error=error
            ),
            if_applied=finished_before,
        )

    def get_execution(self, request_id: str) -> Execution | None:
        return self._send(execution_calls.get_execution(request_id))

    def reset_execution(self, request_id: str, *, actor: str = "", channel: str = "api") -> Execution:
        """A person lets an in_doubt, failed or abandoned call run (again)."""
        return self._send(execution_calls.reset_execution(request_id))

    def list_executions(
        self,
        *,
        status: ExecutionStatus | str = ExecutionStatus.IN_DOUBT,
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Execution]:
        """Executions in `status` whose request the token's user may see, newest request first
        (`cursor`: the last request id of the previous page), as `Store.list_executions`."""
        found: list[Execution] = []
        while len(found) < limit:
            page, next_cursor = self._send(
                execution_calls.list_executions(status, limit=limit - len(found), cursor=cursor)
            )
            found.extend(page)
            if next_cursor is None:
                break
            cursor = next_cursor
        return found

    def rerun_as_person(self, request_id: str, *, actor: str = "", channel: str = "api") -> Execution:
        """`reset_execution`: the server checks that the token's user may."""
        return self.reset_execution(request_id)
