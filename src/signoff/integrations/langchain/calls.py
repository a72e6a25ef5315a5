"""A LangChain tool call as signoff sees it: its key, its args schema, the signoff `ToolCall`, and
the LangChain objects a `when` or a description gets for it (`GatedCall`), after the model's turn
or in the tools node."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain.agents.middleware import AgentState, ToolCallRequest
from langchain_core.messages import ToolCall as LcToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolRuntime
from langgraph.runtime import Runtime
from pydantic import BaseModel

from signoff import ToolCall

from .callables import GatedCall
from .rounds import round_in


def key(tool_call: LcToolCall) -> str:
    """The call's tool_call_id: with the thread, signoff's key for its request."""
    tool_call_id = tool_call.get("id")
    if tool_call_id is None:
        raise ValueError(
            f"Tool call `{tool_call['name']}` has no ID, so its result can't be matched to it. "
            "Make sure the chat model returns tool call IDs."
        )
    return tool_call_id


def signoff_call(
    tool_call: LcToolCall,
    schemas: dict[str, dict[str, Any]],
    request: ToolCallRequest | None = None,
    *,
    round: str | None = None,
) -> ToolCall:
    """The signoff call: `schemas` has each tool's args schema as the model was offered it (the
    request's edit schema); `round` names the model turn (else read from the tools node's state)."""
    tool = request.tool if request is not None else None
    if round is None and request is not None:
        round = round_in(request.state, key(tool_call))
    return ToolCall(
        name=tool_call["name"],
        args=dict(tool_call["args"]),
        id=key(tool_call),
        description=tool.description if tool is not None else None,
        schema=schemas.get(tool_call["name"]),
        round=round,
    )


def args_schema(tool: BaseTool) -> dict[str, Any] | None:
    """The JSON Schema of the args the model gives `tool` (its `tool_call_schema`), if it has one."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return None


def run_config() -> RunnableConfig:
    try:
        return get_config()
    except RuntimeError:
        return {}


_SCRATCHPAD = "__pregel_scratchpad"


def is_resuming() -> bool:
    """Whether LangGraph runs this node to resume it (it holds a resume value for the node's
    task): then its calls may have requests decided while the run was stopped.

    LangGraph 1.2 has no public way to ask. This reads the task's scratchpad from the run config,
    as `langgraph.types.interrupt` does (its `resume` values for this task, or a resume value for
    any): one place, and when the scratchpad is not there it answers True, so the calls are
    looked up rather than run unasked. Every turn nobody is asked about pays this: subscripts,
    not `.get` calls, and the null resume (a call) only when the task has no value of its own."""
    try:
        # what `get_config()` reads, without its checks
        scratchpad = var_child_runnable_config.get()["configurable"][_SCRATCHPAD]  # type: ignore[index]
        return bool(scratchpad.resume) or scratchpad.get_null_resume(False) is not None
    except (LookupError, TypeError, AttributeError):  # no config, no scratchpad, not one
        return True


def tools_node_call(request: ToolCallRequest) -> GatedCall:
    return GatedCall(
        tool_call=request.tool_call, state=request.state, runtime=request.runtime, request=lambda: request
    )


def model_turn_call(
    tool_call: LcToolCall, state: AgentState[Any], runtime: Runtime[Any], config: RunnableConfig
) -> GatedCall:
    return GatedCall(
        tool_call=tool_call,
        state=state,
        runtime=runtime,
        request=partial(_model_turn_request, tool_call, state, runtime, config),
    )


def _model_turn_request(
    tool_call: LcToolCall, state: AgentState[Any], runtime: Runtime[Any], config: RunnableConfig
) -> ToolCallRequest:
    """The `ToolCallRequest` a `when` predicate gets after the model's turn, built as the stock
    middleware builds it there (no tool; a fresh ToolRuntime from the node's Runtime)."""
    tool_runtime = ToolRuntime(
        state=state,
        context=runtime.context,
        config=config,
        stream_writer=runtime.stream_writer,
        tool_call_id=key(tool_call),
        store=runtime.store,
        execution_info=runtime.execution_info,
        server_info=runtime.server_info,
    )
    return ToolCallRequest(tool_call=tool_call, tool=None, state=state, runtime=tool_runtime)  # type: ignore[arg-type]
