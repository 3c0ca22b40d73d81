"""The seq2seq model of the learned canonizer (dustbuster.learned, issue 15) on a tiny model.

The toy mapping: short token sequences with placeholders; those with a query (``? name <argN>``)
lose it, the others map to themselves (§2.3's (target, target) pairs).  All sequences fit one
padded length, so jit compiles one training shape.
"""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

pytest.importorskip("jax")

from dustbuster.core.errors import DustError  # noqa: E402
from dustbuster.learned.seq2seq import (Hyper, ModelError, Prediction, UNK, exact_match,  # noqa: E402
                                        train)
from dustbuster.learned.store import ModelStore, load_model, save_model  # noqa: E402

TINY = Hyper(embed=16, hidden=32, epochs=60, batch=16, lr=1e-2, seed=3, patience=8, min_steps=0)
WORDS = ["wiki", "user", "page", "tag", "edit", "view"]


def toy_pairs(n: int = 160, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        path = ["h", "/"] + [rng.choice(WORDS) for _ in range(rng.randint(1, 2))] + ["<arg1>"]
        if i % 2:
            pairs.append((path + ["?", rng.choice(["sid", "ref"]), "<arg2>"], path))
        else:
            pairs.append((path, path))
    return pairs


@pytest.fixture(scope="module")
def model():
    return train(toy_pairs(), TINY)


def test_learns_the_toy_mapping(model):
    assert exact_match(model, toy_pairs()) >= 0.95
    assert model.info["epochs"] >= 1 and model.info["train_seconds"] > 0
    assert model.info["final_loss"] == model.info["losses"][-1]


def test_on_epoch_is_called_with_mean_losses():
    seen = []
    train(toy_pairs(20), dataclasses.replace(TINY, epochs=2), on_epoch=lambda e, l: seen.append((e, l)))
    assert [e for e, _ in seen] == [1, 2] and all(loss > 0 for _, loss in seen)


def test_a_small_site_gets_at_least_min_steps():
    # 20 pairs in batches of 16 = 2 steps per epoch: 10 steps need 5 epochs, though epochs=2
    seen = []
    train(toy_pairs(20), dataclasses.replace(TINY, epochs=2, min_steps=10, patience=100),
          on_epoch=lambda e, l: seen.append(e))
    assert seen == [1, 2, 3, 4, 5]


def test_same_seed_same_parameters_and_predictions():
    short = dataclasses.replace(TINY, epochs=4)
    model, again = train(toy_pairs(), short), train(toy_pairs(), short)
    assert again.vocab == model.vocab
    assert all(np.array_equal(np.asarray(model.params[k]), np.asarray(again.params[k])) for k in model.params)
    seqs = [s for s, _ in toy_pairs(30, seed=9)]
    assert model.predict(seqs) == again.predict(seqs)


def test_prediction_form(model):
    src = ["h", "/", "wiki", "<arg1>", "?", "sid", "<arg2>"]
    [pred] = model.predict([src])
    assert isinstance(pred, Prediction) and pred.finished
    assert pred.tokens == ("h", "/", "wiki", "<arg1>")
    assert 0.5 < pred.confidence <= 1.0
    [short] = model.predict([src], max_len=2)
    assert len(short.tokens) == 2 and not short.finished


def test_unknown_token_gives_unk_not_a_crash(model):
    preds = model.predict([["h", "/", "never-seen", "<arg1>"], []])
    assert len(preds) == 2
    assert all(isinstance(t, str) for p in preds for t in p.tokens)
    assert model.ids(["never-seen"]) == [model.vocab.index(UNK)]


def test_empty_input_list(model):
    assert model.predict([]) == []


def test_many_inputs_keep_their_order(model):
    pairs = toy_pairs(300, seed=5)  # more rows than one padded batch, several lengths
    preds = model.predict([s for s, _ in pairs])
    assert sum(p.tokens == tuple(t) for p, (_, t) in zip(preds, pairs)) >= 0.9 * len(pairs)


def test_no_pairs_is_an_error():
    with pytest.raises(ModelError):
        train([(["x"] * 100, ["x"])], Hyper(max_len=16))


def test_save_load_round_trip(model, tmp_path):
    path = save_model(model, tmp_path / "m", meta={"pairs": 160})
    assert sorted(p.name for p in path.iterdir()) == ["model.json", "model.npz"]
    manifest = json.loads((path / "model.json").read_text())
    assert manifest["format_version"] == 1 and manifest["meta"] == {"pairs": 160}
    assert manifest["param_count"] == model.param_count()
    loaded = load_model(path)
    assert loaded.hyper == model.hyper and loaded.vocab == model.vocab
    seqs = [s for s, _ in toy_pairs(40, seed=7)]
    assert loaded.predict(seqs) == model.predict(seqs)


def test_store_versions(model, tmp_path):
    store = ModelStore(tmp_path)
    assert store.latest("www.example.com") is None and store.versions("www.example.com") == []
    first = store.save("www.example.com", model, {"run": 1})
    second = store.save("www.example.com", model, {"run": 2})
    assert (first.name, second.name) == ("v0001", "v0002")
    assert store.versions("www.example.com") == [first, second]
    assert store.latest("www.example.com") == second
    assert json.loads((second / "model.json").read_text())["meta"] == {"run": 2}
    assert store.load("www.example.com").vocab == model.vocab
    (tmp_path / "www.example.com" / "v0003").mkdir()  # incomplete (no model.json): not a version
    assert store.latest("www.example.com") == second
    assert store.save("www.example.com", model, {}).name == "v0004"


@pytest.mark.parametrize("site", ["", "a/b", ".hidden", "..", "x\\y"])
def test_store_rejects_bad_site_names(tmp_path, site):
    with pytest.raises(ModelError):
        ModelStore(tmp_path).versions(site)


def test_bad_directories(model, tmp_path):
    with pytest.raises(ModelError, match="no model directory"):
        load_model(tmp_path / "missing")
    with pytest.raises(ModelError, match="no model.json"):
        load_model(tmp_path)
    path = save_model(model, tmp_path / "m")
    manifest = json.loads((path / "model.json").read_text())
    (path / "model.json").write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(DustError, match="version 99"):
        load_model(path)
    (path / "model.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ModelError, match="not a dustbuster-seq2seq model"):
        load_model(path)
    (path / "model.json").write_text("{not json")
    with pytest.raises(ModelError, match="unreadable"):
        load_model(path)
