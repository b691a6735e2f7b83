"""MCP's methods over one open memory: ``initialize``, ``ping``, ``tools/list`` and
``tools/call``, each taking a parsed JSON-RPC request and giving back its result, or
raising ``RpcError`` for the client to see as a JSON-RPC error.

Two kinds of failure, as MCP separates them: a request the server cannot take (an unknown
method or tool, an argument that does not fit the tool's schema, or one the library
refuses by name) is a JSON-RPC error naming the field; a call that was well-formed but
failed while running (the store is read-only, locked or full) is a tool result with
``isError``, so the model sees it and can say so.
"""

from __future__ import annotations

from typing import Any

from memvara import InvalidArgumentError, Memvara, MemvaraError, __version__

from ._schema import ArgumentError, check
from ._tools import TOOLS

__all__ = ["INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "PROTOCOL_VERSIONS",
           "RpcError", "Session"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The MCP revisions this server speaks, newest first (all of them use the
``initialize`` handshake; its tools answer the same way in each)."""

INSTRUCTIONS = (
    "Long-term memory, kept across conversations. Before answering from what you know"
    " about the user, call memory_recall (or memory_search for ids and scores). Store what"
    " the user says with memory_add, or one clear fact with memory_remember. Facts have two"
    " clocks: memory_history and the valid_at/known_at arguments show what held, and what"
    " was believed, at any instant (ISO-8601 with a UTC offset). memory_forget retires a"
    " fact that is wrong; it stays in the history."
)


class RpcError(Exception):
    """A request answered with a JSON-RPC error; ``field`` names what was wrong."""

    def __init__(self, code: int, field: str, problem: str, data: dict[str, Any] | None = None,
                 ) -> None:
        self.code = code
        self.field = field
        super().__init__(f"{field}: {problem}")
        self.data = {"field": field, **(data or {})}


def _params(request: dict[str, Any]) -> dict[str, Any]:
    params = request.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params", "expected an object")
    return params


class Session:
    """One client's conversation with the server, over one memory at the server's scope."""

    def __init__(self, mem: Memvara) -> None:
        self.mem = mem

    def call(self, method: str, request: dict[str, Any]) -> dict[str, Any]:
        """The result of one request.

        Raises:
            RpcError: an unknown method, or params it cannot take.
        """
        if method == "initialize":
            return self._initialize(_params(request))
        if method == "ping":
            return {}
        if method == "tools/list":
            _params(request)  # a cursor is accepted: there is one page
            return {"tools": [tool.listing() for tool in TOOLS.values()]}
        if method == "tools/call":
            return self._call_tool(_params(request))
        raise RpcError(METHOD_NOT_FOUND, "method",
                       f"unknown method {method!r:.80}; this server answers initialize,"
                       " ping, tools/list and tools/call")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "params.protocolVersion",
                           "expected a string such as " + repr(PROTOCOL_VERSIONS[0]))
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "memvara", "title": "memvara memory", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "params.name",
                           "missing" if name is None else "expected a string")
        tool = TOOLS.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, "params.name",
                           f"unknown tool {name!r:.80}; the tools are {', '.join(TOOLS)}")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "params.arguments", "expected an object")
        try:
            structured, text = tool.call(self.mem, check(arguments, tool.input_schema, ""))
        except ArgumentError as exc:
            problem = exc.problem
            if exc.field in ("tenant", "user", "agent", "session"):
                problem += " (the scope is set by the server's environment, MEMVARA_"\
                           f"{exc.field.upper()}, never by a tool call)"
            raise RpcError(INVALID_PARAMS, exc.field, problem, {"tool": name}) from None
        except InvalidArgumentError as exc:
            raise RpcError(INVALID_PARAMS, exc.argument, exc.problem,
                           {"tool": name, "code": exc.code}) from None
        except MemvaraError as exc:
            failure = {"code": exc.code, "message": str(exc)}
            return {"content": [{"type": "text", "text": f"{exc.code}: {exc}"}],
                    "structuredContent": {"error": failure}, "isError": True}
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
                "isError": False}
