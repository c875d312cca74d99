"""Settings of the tool runner (env vars `AGENTIC_TOOL_RUNNER_*`, plus the fixed `AGENTIC_NATS_URL`)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict


class ToolRunnerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_TOOL_RUNNER_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the probe server binds.")
    port: int = Field(default=8090, description="Probes and /metrics.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    kinds: str = Field(
        default="web_search,code_interpreter,shell,operator",
        description="Tool kinds this runner consumes (each one's durable consumer is `tool-runner-<kind>`).",
    )
    concurrency: int = Field(default=4, ge=1, description="Calls of one kind running at once in this runner.")
    concurrency_overrides: str = Field(default="", description="Per-kind concurrency, e.g. `code_interpreter=1,web_search=8`.")
    ack_wait_seconds: float = Field(
        default=10.0, gt=0,
        description="Silence after which a call is redelivered to another runner: how soon the calls of a dead runner run elsewhere.",
    )
    heartbeat_seconds: float = Field(
        default=3.0, gt=0, description="How often a running call tells NATS it is alive (at most half the ack wait)."
    )
    max_deliveries: int = Field(default=5, ge=1, description="Deliveries of one call before it is given up.")
    redelivery_backoff_seconds: str = Field(
        default="", description="Comma-separated delays before redeliveries (JetStream backoff); empty: ack wait."
    )
    lag_poll_seconds: float = Field(default=5.0, gt=0, description="How often queue depth and consumer lag are exported.")

    # Web search (tools/web_search.py) and operator-written tools (tools/operator.py).
    web_search_provider: str | None = Field(
        default=None,
        pattern="^(brave|you|tavily|searxng)?$",
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_PROVIDER"),
        description="Web search backend: `brave`, `you`, `tavily` or `searxng`; unset, web search calls answer that it is not configured.",
    )
    web_search_base_url: str | None = Field(
        default=None,
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_BASE_URL"),
        description="Base URL of the web search backend (required for `searxng`; a proxy or mirror for the others).",
    )
    web_search_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_API_KEY"),
        description="Key of the web search backend (required for `brave`, `you` and `tavily`).",
    )
    web_search_max_results: int = Field(
        default=10, ge=1, le=20,
        description="Results per query at `search_context_size: high`; `medium` (the default) gets half, `low` a quarter.",
    )
    web_search_timeout_seconds: float = Field(default=10.0, gt=0, description="Longest wait for the web search backend, per call.")
    web_search_cache_seconds: float = Field(
        default=3600.0, ge=0,
        description="How long live search results are kept (a JetStream key-value bucket shared by the runners) to answer "
                    "`web_search` tools with `external_web_access: false`, which never search live; 0 keeps none.",
    )
    operator_modules: str = Field(
        default="",
        description="Comma-separated `module` or `module:attribute` names of operator tools to load, besides the `agentic.tools` entry points.",
    )

    # code_interpreter and shell: the sandbox (sandbox/, docs/sandbox.md).
    sandbox_wall_seconds: float = Field(
        default=30.0, gt=0, description="Wall-clock limit of one sandboxed program; past it its whole process group is killed."
    )
    sandbox_cpu_seconds: int = Field(default=20, ge=1, description="CPU-time limit of each sandboxed process (RLIMIT_CPU).")
    sandbox_memory_mb: int = Field(default=512, ge=64, description="Address-space limit of each sandboxed process, MiB (RLIMIT_AS).")
    sandbox_disk_mb: int = Field(
        default=64, ge=1, description="Size of a sandbox's private working directory (a tmpfs, where namespaces are available) and of its largest file, MiB."
    )
    sandbox_open_files: int = Field(default=64, ge=16, description="Open file descriptors per sandboxed process (RLIMIT_NOFILE).")
    sandbox_processes: int = Field(
        default=32, ge=1, description="Processes and threads per sandbox (RLIMIT_NPROC), enforced where each sandbox has its own uid."
    )
    sandbox_output_bytes: int = Field(
        default=65536, ge=1024, description="stdout and stderr kept per run; a program that prints more is stopped and its output truncated with a marker."
    )
    sandbox_max_concurrent: int = Field(default=4, ge=1, description="Sandboxed programs running at once in this runner; more calls wait.")
    sandbox_uid_base: int = Field(
        default=60000, ge=1000, description="With separate uids: concurrent sandbox i runs as uid and gid `base + i`, with no groups."
    )
    sandbox_separate_uids: bool = Field(
        default=True,
        description="Give each concurrent sandbox its own uid (`sandbox_uid_base + i`) where the runner can: as root, or holding "
                    "CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_FOWNER (ambient when not root). Where it cannot, programs share the runner's uid "
                    "and the runner logs so at start; false: always share it.",
    )
    sandbox_namespaces: bool = Field(
        default=True, description="Isolate with Linux namespaces (network, mount, pid, ipc, uts; a user namespace when not root) where the kernel allows."
    )
    sandbox_landlock: bool = Field(default=True, description="Confine files, exec and TCP with Landlock where the kernel supports it.")
    sandbox_seccomp: bool = Field(default=True, description="Refuse sockets, ptrace, mounts, namespaces, bpf and io_uring with a seccomp filter.")
    sandbox_require_isolation: bool = Field(
        default=True,
        description="Refuse to run code unless the kernel both cuts the network (namespace or seccomp) and confines the filesystem (mount namespace or Landlock).",
    )
    sandbox_readonly_paths: str = Field(default="", description="Comma-separated extra host paths shown read-only inside the sandbox.")
    sandbox_work_root: str = Field(default="", description="Directory for per-call sandbox directories; empty: the system temporary directory.")
    code_interpreter_python: str = Field(
        default="",
        description="Python for code_interpreter (a non-venv installation; its site-packages are importable); empty: the runner's own interpreter, standard library only.",
    )
    code_interpreter_max_code_bytes: int = Field(default=100_000, ge=1, description="Largest `code` a code_interpreter call may carry.")
    shell_enabled: bool = Field(default=False, description="Offer the shell tool (off by default); it runs in the same sandbox as code_interpreter.")
    shell_allowed_commands: str = Field(
        default="cat,cut,date,echo,grep,head,ls,pwd,printf,seq,tail,tr,uniq,wc",
        description="Comma-separated executables the shell tool may run (bare names found on /usr/local/bin, /usr/bin, /bin).",
    )
