"""A bundle's `manifest.json`: read and checked, created or completed by each collector, part by part.

Standard library only, like bundle.py: the broker-side collector shares it. DESIGN.md, "Evidence bundle".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

FORMAT = "kafka-evidence/1"
MANIFEST = "manifest.json"
LISTING = "listing.tsv"  # a log dir's files as `find -printf '%P\t%s\t%T@\n'` lists them


class BundleError(WorkbenchError):
    """Evidence that cannot be opened: names the file and what was expected."""

    def __init__(self, path: str | Path, problem: str, expected: str) -> None:
        self.path = str(path)
        self.problem = problem
        self.expected = expected
        super().__init__(f"{path}: {problem}; expected {expected}")


def read_manifest(root: Path) -> dict[str, Any]:
    """Read and check `manifest.json`; every other part of a bundle is optional."""
    path = root / MANIFEST
    expected = f'{MANIFEST} with "format": "{FORMAT}"'
    if not path.is_file():
        raise BundleError(path, "missing", expected)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BundleError(path, f"unreadable ({e})", expected) from e
    if not isinstance(manifest, dict):
        raise BundleError(path, "not a JSON object", expected)
    if manifest.get("format") != FORMAT:
        raise BundleError(path, f"format is {manifest.get('format')!r}", expected)
    return manifest


def update_manifest(root: Path, **fields: Any) -> dict[str, Any]:
    """Create `manifest.json` or complete an existing one, so a bundle can be assembled from parts
    collected on different hosts: lists (brokers, parts) are merged, other fields set when given."""
    path = Path(root) / MANIFEST
    manifest: dict[str, Any] = read_manifest(Path(root)) if path.exists() else {"format": FORMAT}
    for key, value in fields.items():
        if value is None:
            continue
        old = manifest.get(key)
        if isinstance(value, list) and isinstance(old, list):
            merged = old + [v for v in value if v not in old]
            manifest[key] = sorted(merged) if all(isinstance(v, int) for v in merged) else merged
        else:
            manifest[key] = value
    _write_manifest(Path(root), manifest)
    return manifest


def record_part(root: Path, part: dict[str, Any], same: tuple[str, ...], **fields: Any) -> dict[str, Any]:
    """Add a collector's `part` to the manifest, replacing the part of an earlier run that agrees with it
    on the keys `same` (the same broker captured again). The bundle keeps its first `captured_at`, and
    `redacted` stays false once any part said false: one unredacted part taints the bundle."""
    path = Path(root) / MANIFEST
    manifest: dict[str, Any] = read_manifest(Path(root)) if path.exists() else {"format": FORMAT}
    parts = manifest.get("parts")
    parts = parts if isinstance(parts, list) else []
    kept = [p for p in parts if not (isinstance(p, dict) and all(p.get(k) == part.get(k) for k in same))]
    manifest["parts"] = [*kept, part]
    if manifest.get("redacted") is False:
        fields["redacted"] = False
    if manifest.get("captured_at"):
        fields["captured_at"] = manifest["captured_at"]
    _write_manifest(Path(root), manifest)
    return update_manifest(root, **fields)


def _write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    tmp.replace(root / MANIFEST)


def pasted_entries(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The manifest's "pasted" entries by file: when each paste was taken, the host's zone."""
    entries = manifest.get("pasted")
    return {
        p["file"]: p
        for p in (entries if isinstance(entries, list) else [])
        if isinstance(p, dict) and isinstance(p.get("file"), str)
    }
