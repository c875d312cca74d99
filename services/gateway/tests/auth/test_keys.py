"""Keys files: the format, and a changed file read again (at most once per recheck interval) without a restart."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from agentic_gateway.auth.keys import KeyFile, digest, parse_keys


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tenant_of(table_file: KeyFile, key: str) -> str | None:
    principal = table_file.table().match(digest(key))
    return principal.tenant if principal is not None else None


def test_the_file_format_has_comments_blank_lines_and_hashed_entries() -> None:
    hexdigest = hashlib.sha256(b"sk-hashed").hexdigest()
    table = parse_keys(f"# team keys\n\nsk-a=alpha\n  sk-b = beta  \nsha256:{hexdigest}=gamma\nsk-bare\nsk-c=c,sk-d=d\n")
    assert len(table) == 6
    tenants = {key: principal.tenant for key in ("sk-a", "sk-b", "sk-hashed", "sk-bare", "sk-c", "sk-d")
               if (principal := table.match(digest(key))) is not None}
    assert tenants == {"sk-a": "alpha", "sk-b": "beta", "sk-hashed": "gamma", "sk-bare": "default", "sk-c": "c",
                       "sk-d": "d"}
    assert table.match(digest("sk-unknown")) is None


def test_a_rewritten_file_is_read_again_after_the_recheck_interval(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("sk-old=alpha\n")
    clock = Clock()
    keys = KeyFile(str(path), clock=clock)
    assert tenant_of(keys, "sk-old") == "alpha"
    path.write_text("sk-new=alpha\nsk-other=beta\n")
    assert tenant_of(keys, "sk-old") == "alpha"  # not stat'ed again within the interval
    clock.now += 1.0
    assert tenant_of(keys, "sk-new") == "alpha" and tenant_of(keys, "sk-old") is None


def test_a_swapped_symlink_as_kubernetes_rotates_secrets_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v1" / "keys").write_text("sk-one=alpha\n")
    (tmp_path / "v2" / "keys").write_text("sk-two=alpha\n")
    os.symlink("v1", tmp_path / "..data")
    os.symlink("..data/keys", tmp_path / "keys")
    clock = Clock()
    keys = KeyFile(str(tmp_path / "keys"), clock=clock)
    assert tenant_of(keys, "sk-one") == "alpha"
    os.symlink("v2", tmp_path / "..data_tmp")
    os.replace(tmp_path / "..data_tmp", tmp_path / "..data")
    clock.now += 5
    assert tenant_of(keys, "sk-two") == "alpha" and tenant_of(keys, "sk-one") is None


@pytest.mark.parametrize("broken", ["sha256:nothex=alpha\n", None])
def test_a_broken_or_vanished_file_keeps_the_last_keys(tmp_path: Path, broken: str | None) -> None:
    path = tmp_path / "keys"
    path.write_text("sk-a=alpha\n")
    clock = Clock()
    keys = KeyFile(str(path), clock=clock)
    if broken is None:
        path.unlink()
    else:
        path.write_text(broken)
    clock.now += 1.0
    assert tenant_of(keys, "sk-a") == "alpha"


def test_admin_files_make_admin_principals(tmp_path: Path) -> None:
    path = tmp_path / "admin"
    path.write_text("sk-root=ops\n")
    principal = KeyFile(str(path), admin=True).table().match(digest("sk-root"))
    assert principal is not None and principal.admin


def test_a_rewritten_file_with_weak_keys_is_not_taken_by_a_strict_gateway(tmp_path: Path) -> None:
    path, clock = tmp_path / "keys", Clock()
    strong = "sk-" + "z9" * 16
    path.write_text(f"{strong}=team-a\n")
    keys = KeyFile(str(path), recheck_seconds=1.0, clock=clock, strict=True)
    path.write_text(f"{strong}=team-a\nshort=team-b\n")
    os.utime(path, ns=(1, 1))
    clock.now += 2
    assert tenant_of(keys, strong) == "team-a" and tenant_of(keys, "short") is None  # the last keys kept
    assert parse_keys("short=team-b\nk=ey=x").problems() == [
        "entry 1 (tenant 'team-b'): the key is 5 characters; use keys of at least 24 (`openssl rand -hex 24`)",
        "entry 2 (tenant 'x'): more than one `=`: write `key=tenant` with a key without `=`"]
