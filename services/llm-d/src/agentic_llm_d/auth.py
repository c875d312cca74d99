"""The workload token every split route requires, compared in constant time, and the caller's tenant."""

from __future__ import annotations

import hashlib
import hmac

from agentic.v1 import common_pb2
from agentic_core.errors import AuthenticationFailed, InvalidRequest
from agentic_runtime.logs import bind_principal

WORKLOAD_TOKEN_HEADER = "x-agentic-workload-token"
DEFAULT_TENANT = "default"  # the gateway's tenant for callers without API keys


def _digest(value: str) -> bytes:
    # Equal-length digests: the comparison takes the same time whatever the presented length.
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest()


def split_principal(tenant: str) -> common_pb2.Principal:
    """Who a split turn runs for: the coordinator's tenant; llm-d knows no API key."""
    return common_pb2.Principal(tenant=tenant, subject="llm-d")


class WorkloadAuth:
    def __init__(self, api_token: str, tenant_header: str, max_tenant_bytes: int) -> None:
        self._expected = _digest(api_token)
        self.tenant_header = tenant_header.lower()
        self.max_tenant_bytes = max_tenant_bytes

    def check_token(self, presented: str | None) -> None:
        if presented is None or not hmac.compare_digest(_digest(presented), self._expected):
            raise AuthenticationFailed("missing or invalid workload token", code="invalid_workload_token")

    def tenant(self, header_value: str | None) -> str:
        """The tenant header's value, or `default` without one; bound into every context hydrate issues, and into
        the request's log lines."""
        tenant = DEFAULT_TENANT if header_value is None else header_value.strip()
        if not tenant or len(tenant.encode()) > self.max_tenant_bytes or not tenant.isprintable():
            raise InvalidRequest(
                f"The {self.tenant_header} header must name a tenant of 1 to {self.max_tenant_bytes} printable bytes.",
                param=self.tenant_header, code="invalid_request_error",
            )
        bind_principal(split_principal(tenant))
        return tenant
