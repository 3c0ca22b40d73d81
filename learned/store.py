"""Saved seq2seq models, versioned per site (the model is dustbuster.learned.seq2seq, §2.4).

A model directory holds two files:

* ``model.npz``: the parameters, one array per stable name (``embed``, ``enc_wx``, ...);
* ``model.json``: ``format`` and ``format_version``, the vocabulary, the hyper-parameters, the
  training ``info``, the jax version, the parameter count and shapes, the npz's size, and the
  caller's ``meta`` (the training data's counts, the canonicalization choice...).

Both are written to temporary names and renamed, ``model.json`` last: a directory with a
``model.json`` is complete.  :class:`ModelStore` keeps ``root/<site>/v0001``, ``v0002``, ...
The paper (§3.1) trains one model per website; it says nothing of storing them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import zipfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from dustbuster.learned.seq2seq import Hyper, Model, ModelError

log = logging.getLogger(__name__)

FORMAT = "dustbuster-seq2seq"
FORMAT_VERSION = 1
_VERSION_DIR = re.compile(r"v(\d{4,})")


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def save_model(model: Model, directory: str | os.PathLike, meta: dict | None = None) -> Path:
    """Write ``model.npz`` and ``model.json`` into ``directory`` (created if missing); returns it."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    arrays = {name: np.asarray(value) for name, value in model.params.items()}
    tmp = path / "model.npz.tmp"
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # the keys are parameter names, never savez's allow_pickle
    os.replace(tmp, path / "model.npz")
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "vocab": list(model.vocab),
                "hyper": dataclasses.asdict(model.hyper), "info": model.info, "jax_version": jax.__version__,
                "param_count": model.param_count(),
                "param_shapes": {name: list(a.shape) for name, a in sorted(arrays.items())},
                "npz_bytes": (path / "model.npz").stat().st_size, "meta": meta or {}}
    tmp = path / "model.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, default=_jsonable))
    os.replace(tmp, path / "model.json")
    log.info("saved model to %s (%s parameters)", path, manifest["param_count"])
    return path


def read_manifest(directory: str | os.PathLike) -> dict:
    """``model.json`` of a model directory, checked for the format and its version."""
    path = Path(directory)
    if not path.is_dir():
        raise ModelError(f"no model directory at {path}")
    try:
        manifest = json.loads((path / "model.json").read_text())
    except FileNotFoundError:
        raise ModelError(f"{path} is not a model directory (no model.json)") from None
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}/model.json is unreadable: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelError(f"{path}/model.json is not a {FORMAT} model")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ModelError(f"{path} holds format version {manifest.get('format_version')!r}; "
                         f"this code reads version {FORMAT_VERSION}")
    return manifest


def load_model(directory: str | os.PathLike) -> Model:
    """The model saved by :func:`save_model` in ``directory``; :class:`ModelError` if it is missing,
    foreign, of another format version or incomplete."""
    path = Path(directory)
    manifest = read_manifest(path)
    missing = {"hyper", "vocab", "info", "param_shapes"} - set(manifest)
    if missing:
        raise ModelError(f"{path}/model.json lacks {sorted(missing)}: not a complete model")
    known = {f.name for f in dataclasses.fields(Hyper)}
    unknown = set(manifest["hyper"]) - known
    if unknown:
        raise ModelError(f"{path}/model.json has unknown hyper-parameters {sorted(unknown)}")
    try:
        with np.load(path / "model.npz") as npz:
            params = {name: jnp.asarray(npz[name]) for name in npz.files}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{path}/model.npz is missing or unreadable: {exc}") from None
    shapes = {name: list(a.shape) for name, a in sorted(params.items())}
    if shapes != manifest["param_shapes"]:
        raise ModelError(f"{path}/model.npz does not match model.json's parameter shapes")
    return Model(Hyper(**manifest["hyper"]), list(manifest["vocab"]), params, dict(manifest["info"]))


class ModelStore:
    """Models per site: ``root/<site>/v0001``, ``v0002``, ... (the newest is the highest number)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def site_dir(self, site: str) -> Path:
        if (not isinstance(site, str) or not site or "/" in site or "\\" in site or site.startswith(".")
                or "\0" in site or len(site) > 253):
            raise ModelError(f"bad site name {site!r} (a host name: no '/', not starting with '.')")
        return self.root / site

    def versions(self, site: str) -> list[Path]:
        """The complete versions of ``site`` (those with a model.json), oldest first."""
        return [p for _, p in self._numbered(site) if (p / "model.json").is_file()]

    def latest(self, site: str) -> Path | None:
        versions = self.versions(site)
        return versions[-1] if versions else None

    def save(self, site: str, model: Model, meta: dict | None = None) -> Path:
        """Save ``model`` as the next version of ``site``; ``meta`` goes to model.json's "meta"."""
        numbered = self._numbered(site)
        number = numbered[-1][0] + 1 if numbered else 1
        while True:
            path = self.site_dir(site) / f"v{number:04d}"
            try:
                path.mkdir(parents=True, exist_ok=False)
                break
            except FileExistsError:  # another writer took this number
                number += 1
        return save_model(model, path, meta)

    def load(self, site: str, version: int | None = None) -> Model:
        """The latest (or the given) version of ``site``'s model."""
        path = self.latest(site) if version is None else self.site_dir(site) / f"v{version:04d}"
        if path is None:
            raise ModelError(f"no saved model for site {site!r} under {self.root}")
        return load_model(path)

    def _numbered(self, site: str) -> list[tuple[int, Path]]:
        directory = self.site_dir(site)
        if not directory.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in directory.iterdir()
                 if p.is_dir() and (m := _VERSION_DIR.fullmatch(p.name))]
        return sorted(found)
