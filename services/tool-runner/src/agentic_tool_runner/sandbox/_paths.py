"""Which host files a sandboxed program sees: system directories and the interpreter, read-only.

Everything else (the service's code and virtual environment, /home, /root, /tmp, /etc) is
absent from the sandbox's root, and outside the Landlock grants where there is no mount namespace.
"""

from __future__ import annotations

import os
import struct
import sys
import sysconfig
from collections.abc import Iterable
from functools import lru_cache

SYSTEM_PATHS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
)  # fmt: skip
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
COMMAND_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
SANDBOX_ENV = {"PATH": ":".join(COMMAND_PATH), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def base_python() -> str:
    """The runner's own interpreter without its virtual environment (whose packages stay hidden)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def interpreter_prefixes(python: str) -> list[str]:
    if python == base_python():
        return [sys.base_prefix, sys.base_exec_prefix]
    return [os.path.dirname(os.path.dirname(os.path.realpath(python)))]  # <prefix>/bin/python


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def visible_paths(python: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Existing paths to show read-only, parents first, none repeated under another."""
    chosen: list[str] = []
    candidates = [*SYSTEM_PATHS, *interpreter_prefixes(python), os.path.dirname(os.path.realpath(python)), *extra]
    for path in sorted({os.path.normpath(path) for path in candidates}, key=lambda path: (path.count("/"), path)):
        if not os.path.lexists(path):
            continue
        real_dirs = [root for root in chosen if not os.path.islink(root)]
        if _under(path, real_dirs):
            continue
        chosen.append(path)
    return tuple(chosen)


def masked_paths(visible: Iterable[str], keep: Iterable[str] = ()) -> tuple[str, ...]:
    """Package directories that would otherwise be visible: the service's own code and its deps
    (except under `keep`, the prefix of an operator-chosen interpreter whose packages are wanted)."""
    candidates: set[str] = set()
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars)
        candidates.update(paths[key] for key in ("purelib", "platlib"))
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.add(os.path.dirname(package_root))
    real_visible = [path for path in visible if not os.path.islink(path)]
    keep = list(keep)
    return tuple(
        sorted(path for path in candidates if os.path.isdir(path) and _under(path, real_visible) and not _under(path, keep))
    )


def elf_interpreter(path: str) -> str | None:
    """The dynamic loader an ELF executable names (PT_INTERP); it must be executable too."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:  # 64-bit only
                return None
            endian = "<" if header[5] == 1 else ">"
            (phoff,) = struct.unpack_from(endian + "Q", header, 32)
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 54)
            for index in range(phnum):
                handle.seek(phoff + index * phentsize)
                p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack(endian + "IIQQQQ", handle.read(40))
                if p_type == 3:
                    handle.seek(p_offset)
                    return handle.read(p_filesz).rstrip(b"\0").decode()
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return None


def script_interpreter(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    parts = first[2:].split()
    return parts[0].decode(errors="replace") if parts else None


@lru_cache(maxsize=256)
def execute_grants(executables: tuple[str, ...]) -> tuple[str, ...]:
    """The files a program may exec: the executables, their script interpreters and ELF loaders."""
    grants: set[str] = set()
    pending = list(executables)
    while pending:
        path = os.path.realpath(pending.pop())
        if path in grants or not os.path.isfile(path):
            continue
        grants.add(path)
        pending += [found for found in (elf_interpreter(path), script_interpreter(path)) if found]
    return tuple(sorted(grants))


def resolve_command(name: str, visible: Iterable[str]) -> str | None:
    """The path of a bare command name on the sandbox's PATH, if it is visible in the sandbox."""
    if not name or "/" in name or name in (".", ".."):
        return None
    for directory in COMMAND_PATH:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            real_visible = [path for path in visible if not os.path.islink(path)]
            if _under(os.path.realpath(candidate), real_visible):
                return candidate
    return None
