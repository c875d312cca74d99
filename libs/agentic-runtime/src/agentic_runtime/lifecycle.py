"""Process lifecycle: run under uvloop until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine
from typing import Any

import uvloop


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    uvloop.run(main())


def shutdown_event() -> asyncio.Event:
    """An event set by the first SIGTERM or SIGINT."""
    event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, event.set)
    return event
