"""What a benchmark of bench/ does with its results: the JSON printed and written to ``--out``."""

from __future__ import annotations

import json
from pathlib import Path


def emit(out: dict, path: Path) -> None:
    """Print ``out`` as indented JSON and write the same to ``path`` (its folder made first)."""
    text = json.dumps(out, indent=1)
    print(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
