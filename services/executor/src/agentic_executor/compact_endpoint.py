"""`POST /v1/responses/compact`: the retained user messages and one compaction item for a context; nothing is stored."""

from __future__ import annotations

import time
from typing import Any

from agentic.v1 import executor_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_response_id
from agentic_core.responses.compaction import compacted_response, visible_context
from agentic_core.responses.items import normalize_input
from agentic_core.responses.request import parse_json_object, validate_compact_request
from agentic_core.routing import ModelRouter
from agentic_runtime.state.client import StateClient

from agentic_executor.compaction import Compactor
from agentic_executor.history import History
from agentic_executor.input_media import InputMedia


class CompactEndpoint:
    def __init__(self, state: StateClient, router: ModelRouter, compactor: Compactor, media: InputMedia | None = None) -> None:
        self.history = History(state)
        self.media = media or InputMedia()
        self.router = router
        self.compactor = compactor

    async def compact(self, request: executor_pb2.ExecuteRequest) -> dict[str, Any]:
        if not request.principal.tenant:
            raise InvalidRequest("The request has no tenant.", code="missing_tenant")
        parsed = validate_compact_request(parse_json_object(request.request_json))
        route = self.router.route(parsed.model)
        history = await self.history.read(request.principal, previous_response_id=parsed.previous_response_id)
        # The input's images and files as a turn would send them: the summariser is never handed a URL either.
        items = [*history.items, *await self.media.resolve(normalize_input(parsed.input), request.principal)]
        visible = visible_context(items, self.compactor.seal.opener(request.principal.tenant))
        if not visible:
            raise InvalidRequest("Nothing to compact: give `input` or `previous_response_id`.", param="input",
                                 code="missing_required_parameter")
        compacted = await self.compactor.summarise(route, route.model_for(parsed.model), visible, parsed.instructions,
                                                   request.principal.tenant)
        return compacted_response(new_response_id(), int(time.time()), [*compacted.retained, compacted.item],
                                  compacted.usage)
