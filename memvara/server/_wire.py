"""MCP's stdio transport: one JSON-RPC 2.0 message per line in, one per line out.

Every line read gets at most one line back, written whole and flushed, so a client never
sees half an answer; nothing a client sends (bad JSON, a 10 MB line, an id of the wrong
type) stops the loop. Notifications get no answer, as JSON-RPC requires, and neither do
the client's answers to requests (this server sends none).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from typing import IO, Any

from ._protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    RpcError,
    Session,
)

__all__ = ["MAX_LINE", "handle", "serve"]

MAX_LINE = 4 * 1024 * 1024
"""The longest message read, in bytes: a longer line is skipped unread and refused."""


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def _error(id_: str | int | None, code: int, message: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message, "data": data}}


def _id_kind(id_: object) -> str:
    return "null" if id_ is None else {bool: "boolean", float: "number with a fraction",
                                       dict: "object", list: "array"}[type(id_)]


def handle(session: Session, line: bytes) -> dict[str, Any] | None:
    """The answer to one line: a result, an error, or ``None`` (a notification, or a
    client's answer)."""
    try:
        message = json.loads(line, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return _error(None, PARSE_ERROR, f"message: not JSON: {exc}", {"field": "message"})
    id_: str | int | None = None
    try:
        if not isinstance(message, dict):
            kind = "an array (batches are not supported)" if isinstance(message, list) \
                else type(message).__name__
            raise RpcError(INVALID_REQUEST, "message", f"expected a JSON-RPC object, got {kind}")
        raw = message.get("id")
        if isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
            id_ = raw  # MCP's ids: a string or an integer, never null
        if message.get("jsonrpc") != "2.0":
            raise RpcError(INVALID_REQUEST, "jsonrpc", 'must be "2.0"')
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            return None  # an answer to a request this server never sends
        if not isinstance(method, str):
            raise RpcError(INVALID_REQUEST, "method", "missing, or not a string")
        if "id" not in message:
            return None  # a notification (initialized, cancelled, ...): nothing to answer
        if id_ is None:
            raise RpcError(INVALID_REQUEST, "id",
                           f"must be a string or an integer, got {_id_kind(raw)}")
        return {"jsonrpc": "2.0", "id": id_, "result": session.call(method, message)}
    except RpcError as exc:
        return _error(id_, exc.code, str(exc), exc.data)
    except Exception as exc:  # a bug: say so, and keep serving
        traceback.print_exc(file=sys.stderr)
        return _error(id_, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", {})


def _lines(stream: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """Each line of ``stream``; ``None`` for one longer than ``limit``, whose rest is read
    and dropped without being kept."""
    while line := stream.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while (rest := stream.readline(limit)) and not rest.endswith(b"\n"):
            pass
        yield None


def encode(answer: dict[str, Any]) -> bytes:
    """One answer as one line of ASCII JSON (a lone surrogate in stored text cannot break
    the encoding); an answer that is not JSON becomes an internal error."""
    try:
        text = json.dumps(answer, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        text = json.dumps(_error(answer.get("id"), INTERNAL_ERROR,
                                 f"internal error: the answer is not JSON: {exc}", {}))
    return text.encode("ascii") + b"\n"


def serve(session: Session, stdin: IO[bytes], stdout: IO[bytes], limit: int = MAX_LINE) -> int:
    """Answer every line of ``stdin`` on ``stdout`` until ``stdin`` ends; the exit status
    (0, or 1 when ``stdout`` was closed by the client)."""
    for line in _lines(stdin, limit):
        if line is None:
            answer: dict[str, Any] | None = _error(
                None, INVALID_REQUEST, f"message: longer than {limit:,} bytes; it was not read",
                {"field": "message"})
        elif line.strip():
            answer = handle(session, line)
        else:
            continue  # a blank line is no message
        if answer is not None:
            try:
                stdout.write(encode(answer))
                stdout.flush()
            except BrokenPipeError:
                return 1
    return 0
