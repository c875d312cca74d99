"""`python -m agentic_runtime.secrets_init DIR NAME...`: each named secret generated once into DIR/NAME.

docker-compose runs it before the services on first start, as `make run` generates its keys under `.agentic/`:
nothing secret is committed, and a restart keeps the keys (what they sealed stays readable). The services read
the directory through `AGENTIC_SECRETS_DIR`. Existing files are never rewritten.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
from pathlib import Path

_NAME = re.compile(r"^AGENTIC_[A-Z0-9_]+$")


def ensure_secrets(directory: Path, names: list[str], owner: int | None = None) -> list[str]:
    """Writes a fresh 48-byte secret for every name without a file (readable by `owner` only); returns those."""
    directory.mkdir(parents=True, exist_ok=True)
    created = []
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"not a setting's env var name: {name!r}")
        path = directory / name
        if path.exists():
            continue
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(48))
        if owner is not None:
            os.chown(path, owner, owner)
        created.append(name)
    return created


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--owner", type=int, default=None, help="uid (and gid) that owns the files")
    args = parser.parse_args()
    created = ensure_secrets(args.directory, args.names, args.owner)
    print(f"generated {', '.join(created) if created else 'nothing'} in {args.directory}")


if __name__ == "__main__":
    main()
