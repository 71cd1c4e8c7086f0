"""Per-image seeding: every image gets its own generator derived from (global seed, split, source, index),
so the result does not depend on the order in which workers pick up the images."""

from __future__ import annotations

import zlib

import numpy as np


def stable_id(text: str) -> int:
    """A process-independent 32-bit id for a string (Python's hash() is salted per process)."""
    return zlib.crc32(text.encode("utf-8")) & 0xFFFFFFFF


def image_seed_words(seed: int, split: str, source: str, index: int, attempt: int = 0) -> list[int]:
    words = [int(seed) & 0xFFFFFFFF, stable_id(split), stable_id(source), int(index)]
    return words + [int(attempt)] if attempt else words


def image_rng(seed: int, split: str, source: str, index: int, attempt: int = 0) -> np.random.Generator:
    words = image_seed_words(seed, split, source, index, attempt)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def choice(rng: np.random.Generator, seq, p=None):
    """rng.choice for arbitrary Python objects (returns the element, not a numpy scalar)."""
    if p is not None:
        p = np.asarray(p, dtype=np.float64)
        p = p / p.sum()
    return seq[int(rng.choice(len(seq), p=p))]
