"""uvicorn's HTTP protocol with the two guards it lacks: a bound on reading a request's head, and malformed
requests answered in the API's error shape.

uvicorn bounds only the idle time between requests (`timeout_keep_alive`): a client that opens a connection and
never finishes its headers holds it forever. Here the head of each request must arrive within `header_timeout`
of the connection opening or of the request's first byte; past it the client gets a 408 (no request is running
yet, so a response is still possible) and the connection closes. The body is bounded where it is read
(`service.read_body`), where a 408 can still take the route's own error shape.
"""

from __future__ import annotations

import asyncio

from agentic_core.errors import AgenticError, InvalidRequest, RequestTimeout
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol


class GuardedHttpProtocol(HttpToolsProtocol):
    header_timeout: float = 10.0  # set per server by `guarded_protocol`
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_timer is None:  # a keep-alive connection's next request: its head is bounded too
            self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._disarm_head_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """The parser refused the request (a malformed request line, header or `Content-Length`)."""
        self._send_and_close(InvalidRequest(f"Invalid HTTP request: {msg}", code="invalid_http_request"))

    def _arm_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()  # a pipelined request's head: the running one owns the connection's writes
            return
        self._send_and_close(RequestTimeout(
            f"The request's headers did not arrive within {self.header_timeout:g} s.", code="header_timeout"))

    def _send_and_close(self, error: AgenticError) -> None:
        body = error.body()
        head = [STATUS_LINE[error.http_status]]
        head.extend(name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers)
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def guarded_protocol(header_timeout: float) -> type[GuardedHttpProtocol]:
    """The protocol class for one server (uvicorn builds one protocol per connection from a class)."""
    return type("GuardedHttp", (GuardedHttpProtocol,), {"header_timeout": header_timeout})
