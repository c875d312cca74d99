"""End-to-end fixtures: SDK clients of the running stack, one per tenant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from anthropic import Anthropic
from openai import OpenAI

from conftest import TENANT_KEYS


@pytest.fixture(scope="session")
def gateway_url(stack) -> str:
    return stack.urls["gateway"]


@pytest.fixture(scope="session")
def auth_headers() -> dict[str, str]:
    return {"authorization": f"Bearer {TENANT_KEYS['tenant-a']}"}


@pytest.fixture(scope="session")
def client(stack) -> Iterator[OpenAI]:
    """tenant-a's SDK client; no retries so that error statuses are observed as sent."""
    with OpenAI(base_url=stack.base_url, api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture(scope="session")
def other_tenant(stack) -> Iterator[OpenAI]:
    with OpenAI(base_url=stack.base_url, api_key=TENANT_KEYS["tenant-b"], max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture(scope="session")
def anthropic_client(stack) -> Iterator[Anthropic]:
    with Anthropic(base_url=stack.urls["gateway"], api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=30) as sdk:
        yield sdk
