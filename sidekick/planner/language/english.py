"""Whether a word is a word of English as people write it, not a slip of the keys.

The typo reader (offline/request.py) offers a known word one or two keystrokes away for any word the
agents' examples do not use. For a real word that is wrong: "tea" is one letter from "team", and "I need
tea bags" was read as a question about HR teams. The embedding model's tokenizer (wordllama's, a 32,000
piece SentencePiece vocabulary, inside its wheel) holds the common words of English whole: "tea",
"milk", "eggs", "remove" are one piece each, while "grocey", "tomorow" and "calender" are cut into
several. A word that is one whole piece of at least three letters is taken as meant.

Without the wheel every word is unknown here and the typo reader works as before.
"""

from __future__ import annotations

import json
from functools import lru_cache

from dreamer.sidekick.planner.language.embeddings import TOKENIZER, package_folder

MIN_LETTERS = 3
_WORD_START = "\u2581"  # SentencePiece's mark of a piece that begins a word


@lru_cache(maxsize=1)
def _whole_words() -> frozenset[str]:
    try:
        config = json.loads((package_folder() / TOKENIZER).read_text(encoding="utf-8"))
        vocab = config["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError, FileNotFoundError):
        return frozenset()
    pieces = vocab.keys() if isinstance(vocab, dict) else (entry[0] for entry in vocab)
    # Lower-case pieces only: "Mik" is a piece of names, never the word "milk" mistyped.
    return frozenset(p[1:] for p in pieces
                     if isinstance(p, str) and p.startswith(_WORD_START) and len(p) > MIN_LETTERS
                     and p[1:].isalpha() and p[1:].islower())


def is_english_word(word: str) -> bool:
    """`word` is one whole piece of the tokenizer's vocabulary: an ordinary word, written as meant."""
    return word.casefold() in _whole_words()
