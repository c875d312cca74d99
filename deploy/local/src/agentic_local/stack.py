"""The whole agentic stack as local processes: the same entrypoints, env vars and probes as in Kubernetes."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agentic_local.infra import EmbeddedNats, EmbeddedPostgres
from agentic_local.processes import ChildProcess, free_port, port_is_free, run_quiet, wait_until


@dataclass
class StackConfig:
    data_dir: Path
    upstream_url: str = "http://127.0.0.1:8000/v1"
    upstream_api_key: str | None = None
    gateway_port: int = 8080          # 0 picks a free port
    llm_d_port: int = 8081            # 0 picks a free port
    database_url: str | None = None   # None starts the embedded PostgreSQL
    nats_url: str | None = None       # None starts the embedded NATS
    extra_env: dict[str, str] = field(default_factory=dict)
    # Env of one service's processes only, by service name (`executor`, `tool-runner`, ...), over `extra_env`: e.g.
    # each service's own NATS user.
    service_env: dict[str, dict[str, str]] = field(default_factory=dict)
    ready_timeout: float = 90.0

    @classmethod
    def from_env(cls, data_dir: Path) -> StackConfig:
        env = os.environ
        return cls(
            data_dir=data_dir,
            upstream_url=env.get("AGENTIC_UPSTREAM_URL", cls.upstream_url),
            upstream_api_key=env.get("AGENTIC_UPSTREAM_API_KEY") or None,
            gateway_port=int(env.get("AGENTIC_PORT", "8080")),
            llm_d_port=int(env.get("AGENTIC_LLM_D_PORT", "8081")),
            database_url=env.get("AGENTIC_DATABASE_URL") or None,
            nats_url=env.get("AGENTIC_NATS_URL") or None,
        )


def _port(requested: int, what: str) -> int:
    if requested == 0:
        return free_port()
    if not port_is_free(requested):
        raise RuntimeError(f"port {requested} for {what} is in use; set another one")
    return requested


def _grpc_channel(port: int, env: Mapping[str, str]) -> grpc.Channel:
    """Plaintext, or TLS as the services' own clients connect when `AGENTIC_GRPC_TLS_CA_FILE` is set
    (agentic_runtime.tls; the launcher does not depend on the runtime)."""
    target = f"127.0.0.1:{port}"
    if not env.get("AGENTIC_GRPC_TLS_CA_FILE"):
        return grpc.insecure_channel(target)

    def read(name: str) -> bytes | None:
        return Path(env[name]).read_bytes() if env.get(name) else None

    credentials = grpc.ssl_channel_credentials(read("AGENTIC_GRPC_TLS_CA_FILE"), read("AGENTIC_GRPC_TLS_KEY_FILE"),
                                               read("AGENTIC_GRPC_TLS_CERT_FILE"))
    name = env.get("AGENTIC_GRPC_TLS_SERVER_NAME")
    return grpc.secure_channel(target, credentials, options=[("grpc.ssl_target_name_override", name)] if name else [])


def _grpc_serving(port: int, env: Mapping[str, str]) -> bool:
    with _grpc_channel(port, env) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply: health_pb2.HealthCheckResponse = stub.Check(  # type: ignore[attr-defined]  # the stubs' HealthStub has no methods
            health_pb2.HealthCheckRequest(), timeout=1.0
        )
        return reply.status == health_pb2.HealthCheckResponse.SERVING


def _http_ready(url: str) -> bool:
    return httpx.get(url, timeout=2.0).status_code == 200


def llm_d_secrets(data_dir: Path) -> tuple[str, str]:
    """Generated once and kept, so that a restart keeps issued contexts valid."""
    key = os.environ.get("AGENTIC_LLM_D_SIGNING_KEY")
    token = os.environ.get("AGENTIC_LLM_D_API_TOKEN")
    if key and token:
        return key, token
    path = data_dir / "llm-d.secrets"
    if path.exists():
        stored_key, stored_token = path.read_text().split()
    else:
        stored_key, stored_token = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
        path.touch(mode=0o600)
        path.write_text(f"{stored_key}\n{stored_token}\n")
    return key or stored_key, token or stored_token


def kept_secret(data_dir: Path, env_name: str, file_name: str) -> str:
    """A shared key the caller did not set, generated once and kept under the data folder: what it sealed stays
    readable across restarts."""
    key = os.environ.get(env_name)
    if key:
        return key
    path = data_dir / file_name
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(48) + "\n")
    return path.read_text().strip()


def compaction_key(data_dir: Path) -> str:
    """The executors' shared compaction key (compaction and reasoning items)."""
    return kept_secret(data_dir, "AGENTIC_EXECUTOR_COMPACTION_KEY", "compaction.key")


def credentials_key(data_dir: Path) -> str:
    """The key sealing MCP credentials on NATS, shared by the executor, llm-d and the mcp-bridge."""
    return kept_secret(data_dir, "AGENTIC_CREDENTIALS_KEY", "credentials.key")


def background_signing_key(data_dir: Path) -> str:
    """The executors' shared key signing queued background turns: turns queued before a restart still verify."""
    return kept_secret(data_dir, "AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY", "background-signing.key")


class LocalStack:
    """Start with `start()`, stop with `stop()`; `urls` names every service's address."""

    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.data_dir = config.data_dir.resolve()
        self.logs_dir = self.data_dir / "logs"
        self.postgres: EmbeddedPostgres | None = None
        self.nats: EmbeddedNats | None = None
        self.children: list[ChildProcess] = []
        self.tool_runners: list[ChildProcess] = []
        self.urls: dict[str, str] = {}
        self.metrics_urls: dict[str, str] = {}
        self.database_url = ""
        self.nats_url = ""
        self.ports: dict[str, int] = {}  # the gRPC ports of state and the first executor, for added replicas

    @property
    def base_url(self) -> str:
        return self.urls["gateway"] + "/v1"

    def start(self) -> LocalStack:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._start_infrastructure()
            self._migrate()
            self._start_services()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_infrastructure(self) -> None:
        if self.config.database_url:
            self.database_url = self.config.database_url
        else:
            self.postgres = EmbeddedPostgres(self.data_dir, self.logs_dir)
            self.database_url = self.postgres.start()
            self.urls["postgres"] = self.database_url
        if self.config.nats_url:
            self.nats_url = self.config.nats_url
        else:
            self.nats = EmbeddedNats(self.data_dir, self.logs_dir)
            self.nats_url = self.nats.start()
            self.urls["nats"] = self.nats_url

    def _env(self, **wiring: str | int) -> dict[str, str]:
        """The caller's whole environment (every setting of the README's table works under `make run`),
        overridden only by the wiring the launcher owns: addresses, ports, the servers it started, secrets."""
        env = dict(os.environ)
        env.update({"AGENTIC_DATABASE_URL": self.database_url, "AGENTIC_NATS_URL": self.nats_url,
                    "AGENTIC_CREDENTIALS_KEY": credentials_key(self.data_dir)})
        env.update(self.config.extra_env)
        env.update({key: str(value) for key, value in wiring.items()})
        return env

    def _migrate(self) -> None:
        run_quiet([sys.executable, "-m", "agentic_state", "migrate"], env=self._env())
        run_quiet([sys.executable, "-m", "agentic_retrieval", "migrate"], env=self._env())

    def _spawn(self, name: str, module: str, env: dict[str, str]) -> ChildProcess:
        service = name.rstrip("0123456789").removesuffix("-")  # replicas: `gateway-<port>`, `tool-runner-2`
        env = {**env, **self.config.service_env.get(service, {})}
        child = ChildProcess(name, [sys.executable, "-m", module], self.logs_dir / f"{name}.log", env=env)
        self.children.append(child)
        return child

    def _start_services(self) -> None:
        state_port, executor_port, bridge_port = free_port(), free_port(), free_port()
        gateway_port = _port(self.config.gateway_port, "the gateway (AGENTIC_PORT)")
        llm_d_port = _port(self.config.llm_d_port, "llm-d (AGENTIC_LLM_D_PORT)")
        runner_port, retrieval_port = free_port(), free_port()
        metrics = {name: free_port() for name in ("gateway", "state", "executor", "mcp-bridge", "retrieval")}
        signing_key, api_token = llm_d_secrets(self.data_dir)
        loopback = "127.0.0.1"
        self.ports.update(state=state_port, executor=executor_port, mcp_bridge=bridge_port, retrieval=retrieval_port)

        state = self._spawn("state", "agentic_state", self._env(
            AGENTIC_STATE_HOST=loopback, AGENTIC_STATE_PORT=state_port, AGENTIC_STATE_METRICS_PORT=metrics["state"]))
        executor = self._spawn("executor", "agentic_executor", self._executor_env(executor_port, metrics["executor"]))
        bridge = self._spawn("mcp-bridge", "agentic_mcp_bridge", self._env(
            AGENTIC_MCP_BRIDGE_HOST=loopback, AGENTIC_MCP_BRIDGE_PORT=bridge_port,
            AGENTIC_MCP_BRIDGE_METRICS_PORT=metrics["mcp-bridge"]))
        runner = self._spawn("tool-runner", "agentic_tool_runner", self._env(
            AGENTIC_TOOL_RUNNER_HOST=loopback, AGENTIC_TOOL_RUNNER_PORT=runner_port))
        self.tool_runners = [runner]
        retrieval = self._spawn("retrieval", "agentic_retrieval", self._env(
            AGENTIC_RETRIEVAL_HOST=loopback, AGENTIC_RETRIEVAL_PORT=retrieval_port,
            AGENTIC_RETRIEVAL_METRICS_PORT=metrics["retrieval"]))
        llm_d = self._spawn("llm-d", "agentic_llm_d", self._env(
            AGENTIC_LLM_D_HOST=loopback, AGENTIC_LLM_D_PORT=llm_d_port,
            AGENTIC_LLM_D_STATE_ADDRESS=f"{loopback}:{state_port}",
            AGENTIC_LLM_D_SIGNING_KEY=signing_key, AGENTIC_LLM_D_API_TOKEN=api_token))
        gateway = self._spawn("gateway", "agentic_gateway", self._gateway_env(
            gateway_port, os.environ.get("AGENTIC_GATEWAY_HOST", loopback), AGENTIC_GATEWAY_METRICS_PORT=str(metrics["gateway"])))

        self.urls.update({
            "gateway": f"http://127.0.0.1:{gateway_port}",
            "executor": f"grpc://127.0.0.1:{executor_port}",
            "state": f"grpc://127.0.0.1:{state_port}",
            "mcp-bridge": f"grpc://127.0.0.1:{bridge_port}",
            "retrieval": f"grpc://127.0.0.1:{retrieval_port}",
            "tool-runner": f"http://127.0.0.1:{runner_port}",
            "llm-d": f"http://127.0.0.1:{llm_d_port}",
        })
        self.metrics_urls = {name: f"http://127.0.0.1:{port}/metrics" for name, port in metrics.items()}
        for name in ("tool-runner", "llm-d"):  # their /metrics is on their HTTP port
            self.metrics_urls[name] = self.urls[name] + "/metrics"
        timeout = self.config.ready_timeout
        wait_until(lambda: _grpc_serving(bridge_port, self._env()), timeout, "mcp-bridge health", [bridge])
        wait_until(lambda: _grpc_serving(retrieval_port, self._env()), timeout, "retrieval health", [retrieval])
        wait_until(lambda: _http_ready(self.urls["tool-runner"] + "/ready"), timeout, "tool-runner /ready", [runner])
        wait_until(lambda: _http_ready(self.urls["llm-d"] + "/ready"), timeout, "llm-d /ready", [llm_d, state])
        wait_until(lambda: _http_ready(self.urls["gateway"] + "/ready"), timeout, "gateway /ready",
                   [gateway, executor, state])

    def _upstream_env(self) -> dict[str, str]:
        upstream = {"AGENTIC_UPSTREAM_URL": self.config.upstream_url}
        if self.config.upstream_api_key:
            upstream["AGENTIC_UPSTREAM_API_KEY"] = self.config.upstream_api_key
        return upstream

    def _executor_env(self, port: int, metrics_port: int, **env: str) -> dict[str, str]:
        return self._env(
            AGENTIC_EXECUTOR_HOST="127.0.0.1", AGENTIC_EXECUTOR_PORT=port, AGENTIC_EXECUTOR_METRICS_PORT=metrics_port,
            AGENTIC_EXECUTOR_STATE_ADDRESS=f"127.0.0.1:{self.ports['state']}",
            AGENTIC_EXECUTOR_MCP_BRIDGE_ADDRESS=f"127.0.0.1:{self.ports['mcp_bridge']}",
            AGENTIC_EXECUTOR_RETRIEVAL_ADDRESS=f"127.0.0.1:{self.ports['retrieval']}",
            AGENTIC_EXECUTOR_COMPACTION_KEY=compaction_key(self.data_dir),
            AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY=background_signing_key(self.data_dir), **self._upstream_env(), **env)

    def _gateway_env(self, port: int, host: str = "127.0.0.1", **env: str) -> dict[str, str]:
        wiring: dict[str, str | int] = {
            "AGENTIC_GATEWAY_HOST": host, "AGENTIC_PORT": port,
            "AGENTIC_GATEWAY_EXECUTOR_ADDRESS": f"127.0.0.1:{self.ports['executor']}",
            "AGENTIC_GATEWAY_STATE_ADDRESS": f"127.0.0.1:{self.ports['state']}",
            "AGENTIC_GATEWAY_RETRIEVAL_ADDRESS": f"127.0.0.1:{self.ports['retrieval']}", **self._upstream_env(),
        }
        return self._env(**{**wiring, **env})  # `env` may rewire (e.g. to another executor)

    def add_gateway(self, timeout: float = 60.0, **env: str) -> str:
        """One more gateway replica (the same executor and state); returns its base URL once ready. Its /metrics:
        `gateway_metrics_url(url)`."""
        port, metrics_port = free_port(), free_port()
        child = self._spawn(f"gateway-{port}", "agentic_gateway",
                            self._gateway_env(port, **{"AGENTIC_GATEWAY_METRICS_PORT": str(metrics_port), **env}))
        url = f"http://127.0.0.1:{port}"
        self.metrics_urls[f"gateway-{port}"] = f"http://127.0.0.1:{metrics_port}/metrics"
        wait_until(lambda: _http_ready(url + "/ready"), timeout, f"gateway-{port} /ready", [child])
        return url

    def gateway_metrics_url(self, url: str) -> str:
        """The /metrics URL of the gateway serving `url` (the first one's, or a replica's from `add_gateway`)."""
        if url == self.urls["gateway"]:
            return self.metrics_urls["gateway"]
        return self.metrics_urls[f"gateway-{url.rsplit(':', 1)[1]}"]

    def add_executor(self, timeout: float = 60.0, port: int = 0, **env: str) -> ChildProcess:
        """One more executor replica (gateways keep calling the first; it takes background turns too). `port`: the
        first one's, to stand in for it once it is gone, as a restarted pod does behind its Service."""
        port = port or free_port()
        child_env = self._executor_env(port, free_port(), **env)
        child = self._spawn(f"executor-{port}", "agentic_executor", child_env)
        wait_until(lambda: _grpc_serving(port, child_env), timeout, f"executor-{port} health", [child])
        return child

    def add_tool_runner(self, timeout: float = 60.0, **env: str) -> ChildProcess:
        """One more tool-runner replica (they share the durable consumers), started and ready."""
        port = free_port()
        name = f"tool-runner-{len(self.tool_runners) + 1}"
        child = self._spawn(name, "agentic_tool_runner", self._env(
            AGENTIC_TOOL_RUNNER_HOST="127.0.0.1", AGENTIC_TOOL_RUNNER_PORT=port, **env))
        self.tool_runners.append(child)
        wait_until(lambda: _http_ready(f"http://127.0.0.1:{port}/ready"), timeout, f"{name} /ready", [child])
        return child

    def add_retrieval(self, timeout: float = 60.0, **env: str) -> ChildProcess:
        """One more retrieval replica (the same database and durable consumers: it takes ingestion jobs and
        file_search calls; gateways and executors keep calling the first), started and serving. Its name is
        `retrieval-<port>`, its /metrics `metrics_urls[name]`."""
        port, metrics_port = free_port(), free_port()
        name = f"retrieval-{port}"
        child_env = self._env(AGENTIC_RETRIEVAL_HOST="127.0.0.1", AGENTIC_RETRIEVAL_PORT=port,
                              AGENTIC_RETRIEVAL_METRICS_PORT=metrics_port, **env)
        child = self._spawn(name, "agentic_retrieval", child_env)
        self.metrics_urls[name] = f"http://127.0.0.1:{metrics_port}/metrics"
        wait_until(lambda: _grpc_serving(port, child_env), timeout, f"{name} health", [child])
        return child

    def service(self, name: str) -> ChildProcess:
        """A service this stack started, by its name (`executor`, `tool-runner`, `gateway-<port>`, …)."""
        return next(child for child in self.children if child.name == name)

    def is_ready(self, name: str) -> bool:
        """The readiness probe of one of the first replicas (gRPC health for state, executor, mcp-bridge, retrieval)."""
        grpc_ports = {"state": self.ports["state"], "executor": self.ports["executor"], "mcp-bridge": self.ports["mcp_bridge"],
                      "retrieval": self.ports["retrieval"]}
        if name in grpc_ports:
            return _grpc_serving(grpc_ports[name], self._env())
        return _http_ready(self.urls[name] + "/ready")

    def restart_service(self, name: str, timeout: float = 60.0) -> None:
        """Stop one of the first replicas if it still runs (dead or not), start it again on the same ports, wait for it."""
        child = self.service(name)
        if child.running:
            child.stop()
        child.restart()
        wait_until(lambda: self.is_ready(name), timeout, f"{name} ready again", [child])

    def infra_children(self) -> list[ChildProcess]:
        """The embedded PostgreSQL and NATS this stack started (none when it was given servers)."""
        return [server.child for server in (self.postgres, self.nats) if server is not None and server.child is not None]

    def stop(self) -> None:
        """Services first (they drain), then NATS, then PostgreSQL. Nothing is left running."""
        for child in reversed(self.children):
            child.signal()
        for child in reversed(self.children):
            child.wait_stopped(20.0)
        self.children.clear()
        if self.nats is not None:
            self.nats.stop()
            self.nats = None
        if self.postgres is not None:
            self.postgres.stop()
            self.postgres = None
