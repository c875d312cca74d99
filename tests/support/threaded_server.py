"""A Starlette app served by uvicorn on a thread of the test process, on loopback: the fakes' real HTTP server."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn


class ThreadedServer:
    def __init__(self, app: Any, host: str, port: int, name: str) -> None:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", http="httptools",
                                loop="uvloop")
        self.name = name
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=name, daemon=True)

    def start(self) -> int:
        """Serve; the port it listens on once it does."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} did not start")
            time.sleep(0.01)
        return int(self._server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
