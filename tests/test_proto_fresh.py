"""The generated stubs in libs/agentic-proto match protos/ (run `make proto` when this fails)."""

from __future__ import annotations

from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).parents[1]
GENERATED = ROOT / "libs" / "agentic-proto" / "src"


def test_generated_stubs_are_fresh(tmp_path: Path) -> None:
    protos = sorted(str(path.relative_to(ROOT / "protos")) for path in (ROOT / "protos").rglob("*.proto"))
    status = protoc.main([
        "grpc_tools.protoc", f"-I{ROOT / 'protos'}", f"-I{Path(protoc.__file__).parent / '_proto'}",
        f"--python_out={tmp_path}", f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", *protos,
    ])
    assert status == 0
    fresh = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*.py*")}
    assert fresh, "protoc generated nothing"
    stale = [str(name) for name, content in fresh.items() if (GENERATED / name).read_bytes() != content]
    assert not stale, f"stale generated files (run `make proto`): {stale}"
