"""Static word embeddings for matching by meaning: wordllama's 256-dimension vectors, offline.

The wheel ships its weights (`weights/l2_supercat_256.safetensors`) and tokenizer
(`tokenizers/l2_supercat_tokenizer_config.json`) inside the package, but its loader
(`WordLlama.load`) looks for the tokenizer under `tokenizer/` and then downloads it
from Hugging Face; importing the package also builds its training configs and
loads its clustering extensions, about 0.6 s of a 1 s budget. So we read the two
packaged files directly, with the same libraries wordllama uses (`tokenizers`,
`safetensors`), and pool token vectors the way `WordLlamaInference.embed` does
(mean over tokens, then unit length). Nothing here can download: the Hugging Face
offline switches are set as well, for any library that looks at them. The model is
loaded once per process (a kernel is one process) and shared by every thread.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import numpy as np

DIM = 256
_lock = threading.Lock()
_model: _Model | None = None
_failed: str | None = None


class EmbeddingsUnavailable(RuntimeError):
    """The embedding model could not be loaded (the wheel is missing or damaged)."""


CONFIG = "l2_supercat"
WEIGHTS = f"weights/{CONFIG}_{DIM}.safetensors"
TOKENIZER = f"tokenizers/{CONFIG}_tokenizer_config.json"


class _Model:
    """wordllama's embedding table and tokenizer, and its mean-pooled embedding of texts."""

    def __init__(self, folder: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        self.tokenizer.enable_padding()
        self.tokenizer.no_truncation()
        with safe_open(str(folder / WEIGHTS), framework="np", device="cpu") as f:
            self.table = np.ascontiguousarray(f.get_tensor("embedding.weight").astype(np.float32))

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        ids = np.clip(np.array([e.ids for e in encoded], dtype=np.int64), 0, len(self.table) - 1)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        summed = np.einsum("btd,bt->bd", self.table[ids], mask)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)


def package_folder() -> Path:
    """Where the wordllama wheel put its files, found without importing the package."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the wordllama package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _load() -> _Model:
    for switch in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(switch, "1")
    return _Model(package_folder())


def model() -> _Model:
    """The loaded model (loading it on first use); EmbeddingsUnavailable when it cannot be."""
    global _model, _failed
    if _model is not None:
        return _model
    with _lock:
        if _model is None and _failed is None:
            try:
                _model = _load()
            except Exception as exc:  # noqa: BLE001 - a broken wheel must leave the template matcher working
                _failed = f"{type(exc).__name__}: {exc}"
        if _model is None:
            raise EmbeddingsUnavailable(f"the wordllama embeddings could not be loaded ({_failed})")
        return _model


def available() -> bool:
    try:
        model()
    except EmbeddingsUnavailable:
        return False
    return True


def warm() -> None:
    """Load the model now, in a thread of its own, so that the first message does not wait for it."""
    threading.Thread(target=available, name="embeddings-load", daemon=True).start()


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors, one row per text (a text with no known word gets a zero row)."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    vectors = model().embed(texts)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
