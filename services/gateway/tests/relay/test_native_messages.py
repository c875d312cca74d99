"""Which model servers serve `/v1/messages` themselves (native_messages.py): only a refusal that can be about the
route alone marks a server, and a marked server is asked again after the recheck interval."""

from __future__ import annotations

import orjson
import pytest
from agentic_gateway.relay.native_messages import NativeMessagesVerdicts, lacks_messages_route, route_refused


@pytest.mark.parametrize(("status", "body", "lacks"), [
    (405, b'{"error": {"message": "Method Not Allowed"}}', True),  # a 405 is always the route's
    (404, b'{"detail": "Not Found"}', True),  # FastAPI's own 404: no such path
    (404, b"<html>404</html>", True),  # a proxy's page
    (404, orjson.dumps({"error": {"message": "The model `m` does not exist."}}), False),  # maybe the model's
    (404, orjson.dumps({"type": "error", "error": {"type": "not_found_error"}}), False),  # Anthropic's shape
    (400, b'{"detail": "Not Found"}', False),  # a refusal of the request, not of the route
])
def test_only_a_refusal_about_the_route_says_the_server_lacks_it(status: int, body: bytes, lacks: bool) -> None:
    assert lacks_messages_route(status, body) is lacks
    assert route_refused(status) is (status in (404, 405))


def test_a_server_without_the_route_is_asked_again_after_the_recheck_interval() -> None:
    now = [100.0]
    verdicts = NativeMessagesVerdicts(recheck_seconds=300.0, clock=lambda: now[0])
    assert not verdicts.unsupported("http://vllm:8000/v1")
    verdicts.mark_unsupported("http://llama:8080/v1")
    now[0] += 299.0
    assert verdicts.unsupported("http://llama:8080/v1")
    assert not verdicts.unsupported("http://vllm:8000/v1")  # another server's verdict is its own
    now[0] += 1.0
    assert not verdicts.unsupported("http://llama:8080/v1")  # its next request tries the server again
    verdicts.mark_unsupported("http://llama:8080/v1")
    assert verdicts.unsupported("http://llama:8080/v1")
