"""The seq2seq URL translator of Xu, Liu and Callan (SIGIR 2017, §2.4), on token sequences, in JAX.

The model knows nothing of URLs: it maps a ``list[str]`` to a ``list[str]``.  Tokenization with
argument placeholders (§2.1, ``<arg1>``...) and the training pairs (§2.3, every URL of a duplicate
cluster -> the cluster's shortest URL, ``(target, target)`` included) are built elsewhere
(dustbuster.core.report.learnpairs).  What this module does, as the paper's §2.4 describes:

* one vocabulary for source and target, the embeddings shared by encoder and decoder, plus the
  specials ``<pad> <s> </s> <unk>``;
* a single-layer GRU encoder and a single-layer GRU decoder (Cho et al.'s GRU, the paper's [4]),
  teacher forcing in training, greedy decoding that stops at ``</s>``.

Departures from the paper, and why:

* **attention**: Luong's "general" score ``h_t^T W_a h_s`` with input feeding
  (the previous ``h~ = tanh(W_c [c; h])`` joins the decoder GRU's input), then the output layer.
  The paper tried attention and saw no significant gain (§2.4);
* **bidirectional encoder**: still one layer, but a forward and a backward GRU whose states are
  concatenated (the paper also tried this, §2.4).  With a forward GRU alone the state at a position
  does not know the token after it, and copying function tokens took thousands of steps to learn
  on a toy task; with both directions it takes a few hundred;
* **loss**: softmax cross-entropy of each target token (padding masked), averaged over the batch's
  target tokens, instead of eq. 3 (per-class binary cross-entropies): the usual, better
  conditioned choice with a softmax output;
* **optimizer**: hand-written Adam (gradients clipped to a global norm of ``Hyper.clip``), batches of
  32, at least ``Hyper.min_steps`` steps (a site of 600 pairs needs ~100 epochs), instead of SGD
  with batches of 20: it fits a site's pairs in minutes on one CPU core;
* **sizes**: embeddings 64 and GRUs 128 by default instead of 512/512: a site's function vocabulary
  has a few hundred tokens at most (§3.1 Table 1: 31-335) and the small model trains on a CPU;
* **early stop**: when every training pair is reproduced exactly, when the loss has not improved by
  1 % for ``Hyper.patience`` epochs, or past ``Hyper.time_budget_s``;
* **confidence**: each prediction carries the geometric mean of its chosen tokens' probabilities
  (``</s>`` included), so long and short outputs compare; callers drop doubtful rewrites and any
  output holding ``<unk>`` (an input token never seen in training).

Padding goes to multiples of ``Hyper.bucket`` (lengths) and powers of two (rows at prediction), so jit
compiles a handful of shapes.  Training is deterministic: the initial parameters come from
``PRNGKey(Hyper.seed)``, the batch order from ``numpy.random.default_rng(Hyper.seed)``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dustbuster.core.errors import DustError

log = logging.getLogger(__name__)

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)
#: the most rows decoded at once by Model.predict (rows are padded to a power of two up to this)
PREDICT_ROWS = 256
#: a mean training loss below this triggers the (costlier) exact-match check of the early stop
FIT_CHECK_LOSS = 0.05
_ADAM_B1, _ADAM_B2, _ADAM_EPS = 0.9, 0.999, 1e-8


class ModelError(DustError):
    """A model cannot be trained, saved or loaded (no pairs, missing or foreign model directory...)."""


@dataclass(frozen=True)
class Hyper:
    """Hyper-parameters (§2.4: embed=512, hidden=512, SGD, batch=20; see the module docstring)."""

    embed: int = 64            #: token embedding size (shared by encoder and decoder)
    hidden: int = 128          #: GRU state size (encoder and decoder)
    epochs: int = 30           #: passes over the pairs, at least (a small site gets more: min_steps)
    min_steps: int = 2000      #: Adam steps at least: epochs rise to ceil(min_steps / steps per epoch)
    batch: int = 32            #: pairs per Adam step
    lr: float = 5e-3           #: Adam's step size
    seed: int = 0              #: parameters' PRNGKey and the batch order's numpy Generator
    max_len: int = 64          #: longer training pairs (source, or target + </s>) are skipped
    bucket: int = 8            #: sequences are padded to a multiple of this length
    clip: float = 5.0          #: global gradient norm clip
    patience: int = 5          #: epochs without a 1 % loss improvement before stopping
    time_budget_s: float | None = 600.0  #: stop after the epoch that passes this many seconds


@dataclass(frozen=True)
class Prediction:
    """A greedy translation: ``tokens`` without ``</s>`` (``<unk>`` kept: discard such outputs),
    ``confidence`` the geometric mean of the chosen tokens' probabilities, ``finished`` False when
    the output reached the length limit without ``</s>`` (a truncated, unusable rewrite)."""

    tokens: tuple[str, ...]
    confidence: float
    finished: bool = True

    @property
    def has_unk(self) -> bool:
        return UNK in self.tokens


def init_params(vocab_size: int, hyper: Hyper) -> dict[str, jax.Array]:
    """Uniform(±1/sqrt(fan_in)) weights (embeddings ±0.1), zero biases, from PRNGKey(hyper.seed)."""
    e, h, v = hyper.embed, hyper.hidden, vocab_size
    shapes = {"embed": (v, e), "fwd_wx": (e, 3 * h), "fwd_wh": (h, 3 * h), "bwd_wx": (e, 3 * h),
              "bwd_wh": (h, 3 * h), "init_w": (2 * h, h), "dec_wx": (e + h, 3 * h), "dec_wh": (h, 3 * h),
              "att_w": (h, 2 * h), "comb_w": (3 * h, h), "out_w": (h, v)}
    keys = jax.random.split(jax.random.PRNGKey(hyper.seed), len(shapes))
    params = {}
    for key, (name, shape) in zip(keys, shapes.items()):
        scale = 0.1 if name == "embed" else 1.0 / math.sqrt(shape[0])
        params[name] = jax.random.uniform(key, shape, jnp.float32, -scale, scale)
    for name, size in (("fwd_bx", 3 * h), ("fwd_bh", 3 * h), ("bwd_bx", 3 * h), ("bwd_bh", 3 * h),
                       ("init_b", h), ("dec_bx", 3 * h), ("dec_bh", 3 * h), ("comb_b", h), ("out_b", v)):
        params[name] = jnp.zeros((size,), jnp.float32)
    return params


def _gru_cell(h, xw, wh, bh):
    """One GRU step; ``xw`` is the input already multiplied by W_x (plus its bias)."""
    hw = h @ wh + bh
    xr, xz, xn = jnp.split(xw, 3, axis=-1)
    hr, hz, hn = jnp.split(hw, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return (1.0 - z) * n + z * h


def _gru_scan(xw, mask, h0, wh, bh, reverse=False):
    """The GRU over time: ``xw`` [B,T,3H], ``mask`` [B,T]; a padded step keeps the state (so the
    backward direction starts at each row's last token)."""
    def step(h, inputs):
        x_t, m_t = inputs
        new = jnp.where(m_t[:, None], _gru_cell(h, x_t, wh, bh), h)
        return new, new
    h_last, hs = jax.lax.scan(step, h0, (jnp.swapaxes(xw, 0, 1), mask.T), reverse=reverse)
    return h_last, jnp.swapaxes(hs, 0, 1)


def _encode(params, src):
    """The bidirectional GRU encoder: states [B,S,2H], the decoder's first state [B,H], the mask."""
    mask = src != PAD_ID
    x = params["embed"][src]
    h0 = jnp.zeros((src.shape[0], params["fwd_wh"].shape[0]), jnp.float32)
    states, lasts = [], []
    for d, reverse in (("fwd", False), ("bwd", True)):
        xw = x @ params[d + "_wx"] + params[d + "_bx"]
        last, hs = _gru_scan(xw, mask, h0, params[d + "_wh"], params[d + "_bh"], reverse)
        states.append(hs)
        lasts.append(last)
    h = jnp.tanh(jnp.concatenate(lasts, axis=-1) @ params["init_w"] + params["init_b"])
    return jnp.concatenate(states, axis=-1), h, mask


def _attend(params, h, enc_w, enc, mask):
    """Luong "general" attention for one decoder state ``h`` [B,H] (``enc_w`` = enc @ W_a^T
    precomputed): ``h~ = tanh(W_c [c; h])``."""
    scores = jnp.where(mask, jnp.einsum("bh,bsh->bs", h, enc_w), -1e9)
    ctx = jnp.einsum("bs,bsh->bh", jax.nn.softmax(scores, axis=-1), enc)
    return jnp.tanh(jnp.concatenate([ctx, h], axis=-1) @ params["comb_w"] + params["comb_b"])


def _decoder(params, src):
    """Encode ``src`` and return the decoder's step function and its first carry.  The step takes
    the previous token's embedding times W_x (``xw``, [B,3H]) and feeds the previous attentional
    state h~ back into the GRU's input (Luong's input feeding)."""
    enc, h, mask = _encode(params, src)
    enc_w = enc @ params["att_w"].T
    e = params["embed"].shape[1]
    w_feed = params["dec_wx"][e:]

    def step(carry, xw):
        h, h_tilde = carry
        h = _gru_cell(h, xw + h_tilde @ w_feed, params["dec_wh"], params["dec_bh"])
        h_tilde = _attend(params, h, enc_w, enc, mask)
        return h, h_tilde

    return step, (h, jnp.zeros_like(h))


def _embed_dec(params, tokens):
    e = params["embed"].shape[1]
    return params["embed"][tokens] @ params["dec_wx"][:e] + params["dec_bx"]


def _loss(params, src, dec_in, dec_out):
    """Mean token cross-entropy with teacher forcing; also (sum, count) for the epoch's mean."""
    step, carry = _decoder(params, src)
    tmask = dec_out != PAD_ID

    def scan_step(carry, inputs):
        xw, m = inputs
        h, h_tilde = step(carry, xw)
        h = jnp.where(m[:, None], h, carry[0])
        return (h, h_tilde), h_tilde

    xw = jnp.swapaxes(_embed_dec(params, dec_in), 0, 1)
    _, h_tildes = jax.lax.scan(scan_step, carry, (xw, tmask.T))
    logits = jnp.swapaxes(h_tildes, 0, 1) @ params["out_w"] + params["out_b"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, dec_out[..., None], axis=-1)[..., 0]
    w = tmask.astype(jnp.float32)
    total, count = jnp.sum(nll * w), jnp.sum(w)
    return total / jnp.maximum(count, 1.0), (total, count)


@jax.jit
def _train_step(params, opt, src, dec_in, dec_out, lr, clip):
    """One Adam step (Kingma & Ba, bias-corrected) on globally norm-clipped gradients."""
    (_, (total, count)), grads = jax.value_and_grad(_loss, has_aux=True)(params, src, dec_in, dec_out)
    leaves = jax.tree_util.tree_leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, clip / (norm + 1e-6)), grads)
    step, m, v = opt
    step = step + 1
    m = jax.tree_util.tree_map(lambda a, g: _ADAM_B1 * a + (1 - _ADAM_B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda a, g: _ADAM_B2 * a + (1 - _ADAM_B2) * g * g, v, grads)
    lr_t = lr * jnp.sqrt(1 - _ADAM_B2 ** step) / (1 - _ADAM_B1 ** step)
    params = jax.tree_util.tree_map(lambda p, a, b: p - lr_t * a / (jnp.sqrt(b) + _ADAM_EPS), params, m, v)
    return params, (step, m, v), total, count


@partial(jax.jit, static_argnums=2)
def _greedy(params, src, steps):
    """Greedy decoding for ``steps`` steps: chosen ids [B,steps] and their probabilities."""
    dec_step, carry = _decoder(params, src)
    banned = jnp.zeros((params["out_b"].shape[0],), bool).at[PAD_ID].set(True).at[BOS_ID].set(True)

    def step(carry, _):
        state, prev = carry
        state = dec_step(state, _embed_dec(params, prev))
        probs = jax.nn.softmax(state[1] @ params["out_w"] + params["out_b"], axis=-1)
        tok = jnp.argmax(jnp.where(banned, -1.0, probs), axis=-1)
        return (state, tok), (tok, jnp.take_along_axis(probs, tok[:, None], axis=-1)[:, 0])

    start = jnp.full((src.shape[0],), BOS_ID, jnp.int32)
    _, (toks, probs) = jax.lax.scan(step, (carry, start), None, length=steps)
    return toks.T, probs.T


def _round_up(n: int, multiple: int) -> int:
    return max(multiple, -(-n // multiple) * multiple)


@dataclass
class Model:
    """A trained translator: ``hyper``, ``vocab`` (ids = positions, the 4 specials first),
    ``params`` (flat dict of named arrays) and ``info`` (training seconds, epochs, final loss...)."""

    hyper: Hyper
    vocab: list[str]
    params: dict[str, jax.Array]
    info: dict = field(default_factory=dict)
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if tuple(self.vocab[:4]) != SPECIALS:
            raise ModelError(f"a vocabulary must start with {SPECIALS}, not {tuple(self.vocab[:4])}")
        self._index = {tok: i for i, tok in enumerate(self.vocab)}

    def ids(self, seq: Sequence[str]) -> list[int]:
        """Token ids, ``<unk>`` for a token outside the vocabulary."""
        return [self._index.get(tok, UNK_ID) for tok in seq]

    def param_count(self) -> int:
        return int(sum(np.prod(p.shape) for p in self.params.values()))

    def predict(self, seqs: Sequence[Sequence[str]], max_len: int | None = None) -> list[Prediction]:
        """Greedy translations of ``seqs``, in order; each output stops at ``</s>`` or after
        ``max_len`` tokens (default: its input's length + 8).  Batched by padded length."""
        encoded = [self.ids(s) for s in seqs]
        out: list[Prediction | None] = [None] * len(encoded)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        b = self.hyper.bucket
        groups: dict[int, list[int]] = {}
        for i in order:
            groups.setdefault(_round_up(len(encoded[i]), b), []).append(i)
        for width, members in groups.items():
            for start in range(0, len(members), PREDICT_ROWS):
                chunk = members[start:start + PREDICT_ROWS]
                limits = [max_len if max_len is not None else len(encoded[i]) + 8 for i in chunk]
                src = np.zeros((1 << (len(chunk) - 1).bit_length(), width), np.int32)
                for row, i in enumerate(chunk):
                    src[row, :len(encoded[i])] = encoded[i]
                toks, probs = _greedy(self.params, jnp.asarray(src), _round_up(max(limits) + 1, b))
                toks, probs = np.asarray(toks), np.asarray(probs)
                for row, i in enumerate(chunk):
                    out[i] = self._prediction(toks[row], probs[row], limits[row])
        return out  # type: ignore[return-value]

    def _prediction(self, toks: np.ndarray, probs: np.ndarray, limit: int) -> Prediction:
        ends = np.flatnonzero(toks[:limit + 1] == EOS_ID)
        finished = len(ends) > 0
        n = int(ends[0]) if finished else limit
        chosen = probs[:n + 1] if finished else probs[:n]
        conf = float(np.exp(np.mean(np.log(np.maximum(chosen, 1e-30))))) if len(chosen) else 0.0
        return Prediction(tuple(self.vocab[t] for t in toks[:n]), conf, finished)


def build_vocab(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[str]:
    """The specials, then every token of sources and targets (one shared vocabulary, §2.4), sorted."""
    tokens = {tok for src, tgt in pairs for seq in (src, tgt) for tok in seq}
    return list(SPECIALS) + sorted(tokens - set(SPECIALS))


def _buckets(model: Model, pairs, hyper: Hyper) -> tuple[list[tuple[np.ndarray, ...]], int]:
    """Pairs as padded id arrays, one group per padded length; each group ends with an all-pad row
    (index n) that fills a short last batch.  Returns the groups and the number of pairs skipped."""
    grouped: dict[int, list[tuple[list[int], list[int]]]] = {}
    skipped = 0
    for src, tgt in pairs:
        if len(src) > hyper.max_len or len(tgt) + 1 > hyper.max_len:
            skipped += 1
            continue
        width = _round_up(max(len(src), len(tgt) + 1), hyper.bucket)
        grouped.setdefault(width, []).append((model.ids(src), model.ids(tgt)))
    out: list[tuple[np.ndarray, ...]] = []
    for width in sorted(grouped):
        members = grouped[width]
        arrays = np.zeros((3, len(members) + 1, width), np.int32)
        for row, (s, t) in enumerate(members):
            arrays[0, row, :len(s)] = s
            arrays[1, row, :len(t) + 1] = [BOS_ID] + t
            arrays[2, row, :len(t) + 1] = t + [EOS_ID]
        out.append((arrays[0], arrays[1], arrays[2]))
    return out, skipped


def _epoch_plan(groups, batch: int, rng: np.random.Generator) -> list[tuple[int, np.ndarray]]:
    plan = []
    for g, (src, _, _) in enumerate(groups):
        n = src.shape[0] - 1
        perm = rng.permutation(n)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            plan.append((g, np.concatenate([idx, np.full(batch - len(idx), n)])))
    return [plan[i] for i in rng.permutation(len(plan))]


def exact_match(model: Model, pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """The share of pairs whose greedy translation is exactly the target (finished, no ``<unk>``)."""
    if not pairs:
        return 0.0
    preds = model.predict([src for src, _ in pairs])
    return sum(p.finished and p.tokens == tuple(tgt) for p, (_, tgt) in zip(preds, pairs)) / len(pairs)


def train(pairs: Sequence[tuple[Sequence[str], Sequence[str]]], hyper: Hyper = Hyper(),
          on_epoch: Callable[[int, float], None] | None = None) -> Model:
    """Fit a model to ``(source, target)`` token pairs (§2.3); ``on_epoch(epoch, mean_loss)`` after
    each epoch (epochs count from 1).  See the module docstring for the early stop."""
    started = time.perf_counter()
    model = Model(hyper, build_vocab(pairs), {})
    groups, skipped = _buckets(model, pairs, hyper)
    if not groups:
        raise ModelError(f"no training pairs of at most {hyper.max_len} tokens ({len(pairs)} given)")
    if skipped:
        log.warning("skipped %s training pairs longer than max_len=%s", skipped, hyper.max_len)
    params = init_params(len(model.vocab), hyper)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    opt = (jnp.zeros((), jnp.float32), zeros, zeros)
    rng = np.random.default_rng(hyper.seed)
    kept = [(s, t) for s, t in pairs if len(s) <= hyper.max_len and len(t) + 1 <= hyper.max_len]
    losses: list[float] = []
    best, stale, stopped, fit = math.inf, 0, "epochs", None
    per_epoch = sum(-(-(g[0].shape[0] - 1) // hyper.batch) for g in groups)
    for epoch in range(1, max(hyper.epochs, -(-hyper.min_steps // per_epoch)) + 1):
        total, count = jnp.zeros(()), jnp.zeros(())
        for g, idx in _epoch_plan(groups, hyper.batch, rng):
            src, dec_in, dec_out = (a[idx] for a in groups[g])
            params, opt, t, c = _train_step(params, opt, src, dec_in, dec_out, hyper.lr, hyper.clip)
            total, count = total + t, count + c
        loss = float(total / count)
        losses.append(loss)
        log.info("epoch %s: mean loss %.4f", epoch, loss)
        if on_epoch is not None:
            on_epoch(epoch, loss)
        stale = 0 if loss < best * 0.99 else stale + 1
        best = min(best, loss)
        if loss < FIT_CHECK_LOSS:
            model.params = params
            fit = exact_match(model, kept)
            if fit == 1.0:
                stopped = "fit"
                break
        if stale >= hyper.patience and epoch * per_epoch >= hyper.min_steps:
            stopped = "plateau"
            break
        if hyper.time_budget_s is not None and time.perf_counter() - started > hyper.time_budget_s:
            stopped = "time"
            break
    model.params = params
    model.info = {"train_seconds": round(time.perf_counter() - started, 3), "epochs": len(losses),
                  "final_loss": losses[-1], "losses": losses, "stopped": stopped, "pairs": len(kept),
                  "skipped_long": skipped, "train_exact": fit, "device": str(jax.devices()[0])}
    return model
