"""numpy's Poisson(1) draws of ``default_rng([seed, index])``, bit for bit, for many sentences in one compiled loop.

Every bootstrap weight is ``np.random.default_rng([seed, index]).poisson(1.0,
replicates)`` (probing.stats.bootstrap): one generator per sentence, so a
sentence's weights depend on nothing but its index. Made in numpy, one
sentence costs a SeedSequence, a PCG64 and a thousand draws through numpy's
per-value dispatch: with a fast model, the largest part of a run's input side
that a plain loop does not have. :func:`poisson_draws` makes the same numbers
for a whole batch of sentences in one loop compiled by numba
(probing.compiling), in the three steps numpy takes, in less time
(benchmarks/RESULTS.md, "Predictions and bootstrap weights compiled"):

1. **SeedSequence** (NEP 19): the entropy ``[seed, index]`` as 32-bit words,
   hashed into a pool of four words, which gives four 64-bit words;
2. **PCG64** seeded from them (``state`` from the first two, ``increment``
   from the last two, numpy's ``pcg64_set_seed``): a 128-bit linear
   congruential step, output by XOR-shift and rotation (XSL-RR), 53 bits of
   it a double in [0, 1);
3. **Poisson(1)** by multiplication (numpy's ``random_poisson_mult``, its
   method for a mean below 10): multiply uniform doubles until the product
   falls to ``exp(-1)`` or below; the value is how many stayed above.

128-bit products are made from 64-bit halves; every operation is an integer
one or the same IEEE double multiplication numpy makes, and ``exp(-1)`` is
computed by Python's ``math.exp``, so the draws are equal, not close.
``tests/test_bootstrap_draws.py`` checks them against numpy itself on every
run (thousands of sentences, several seeds, indices up to 2**32 - 1).

Indices (and seeds) of one 32-bit word each are what the loop takes; a batch
holding a larger index, or a negative one, is drawn by numpy as before
(``None`` here).

>>> import numpy as np
>>> draws = poisson_draws([0, 7], replicates=5, seed=3)
>>> draws.shape, bool((draws[:, 1] == np.random.default_rng([3, 7]).poisson(1.0, 5)).all())
((5, 2), True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from probing.compiling import COMPILED, compiled

WORD = 2**32
"""Indices and seeds below this are one 32-bit word of SeedSequence's entropy: what :func:`poisson_draws` takes."""

# SeedSequence's hash constants (NEP 19; numpy.random.bit_generator).
_INIT_A, _MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_MULT_L, _MIX_MULT_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
_POOL_SIZE = 4
# PCG64's 128-bit multiplier, as high and low 64-bit halves.
_MULT_HIGH, _MULT_LOW = np.uint64(2549297995355413924), np.uint64(4865540595714422341)
# Shifts and masks as uint64: numba turns a uint64 combined with a plain int into a float.
_LOW32 = np.uint64(0xFFFFFFFF)
_ZERO, _ONE, _11, _16, _32, _58, _63, _64 = (np.uint64(n) for n in (0, 1, 11, 16, 32, 58, 63, 64))
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def poisson_draws(sentence_indices: Sequence[int], *, replicates: int, seed: int) -> np.ndarray | None:
    """int64 [replicate, sentence]: column s equals ``np.random.default_rng([seed, index s]).poisson(1.0,
    replicates)``; None where numba is missing or a seed or index is not one 32-bit word (the caller draws with
    numpy)."""
    indices = np.asarray(sentence_indices, dtype=np.int64).reshape(-1)
    if not COMPILED or not 0 <= seed < WORD or (indices.size and not (0 <= indices.min() and indices.max() < WORD)):
        return None
    entropy = np.empty((indices.size, 2), dtype=np.uint64)  # [sentence, word]: SeedSequence's entropy
    entropy[:, 0], entropy[:, 1] = seed, indices
    draws = np.empty((indices.size, replicates), dtype=np.int64)  # [sentence, replicate]: each row one stream
    _draw_all(entropy, math.exp(-1.0), draws)
    return np.ascontiguousarray(draws.T)


@compiled
def _hashmix(value, hash_const):  # pragma: no cover - compiled by numba
    """SeedSequence's ``hashmix``; ``hash_const`` a one-element array it advances."""
    value = (value ^ hash_const[0]) & _LOW32
    hash_const[0] = (hash_const[0] * _MULT_A) & _LOW32
    value = (value * hash_const[0]) & _LOW32
    return value ^ (value >> _16)


@compiled
def _mix(x, y):  # pragma: no cover - compiled by numba
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _LOW32
    return result ^ (result >> _16)


@compiled
def _high_product(a, b):  # pragma: no cover - compiled by numba
    """The high 64 bits of the 128-bit product of two uint64, from their 32-bit halves."""
    a0, a1, b0, b1 = a & _LOW32, a >> _32, b & _LOW32, b >> _32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> _32) + (p01 & _LOW32) + (p10 & _LOW32)
    return p11 + (p01 >> _32) + (p10 >> _32) + (middle >> _32)


@compiled
def _step(high, low, inc_high, inc_low):  # pragma: no cover - compiled by numba
    """PCG64's state after one step, ``state * multiplier + increment`` mod 2**128, as (high, low)."""
    product_low = low * _MULT_LOW
    product_high = _high_product(low, _MULT_LOW) + high * _MULT_LOW + low * _MULT_HIGH
    low = product_low + inc_low
    carry = _ONE if low < product_low else _ZERO
    return product_high + inc_high + carry, low


@compiled
def _draw_all(entropy, exp_minus_one, draws):  # pragma: no cover - compiled by numba
    """draws[s, :] for the entropy words of row s (see the module's three steps)."""
    pool = np.empty(_POOL_SIZE, dtype=np.uint64)
    hash_const = np.empty(1, dtype=np.uint64)
    words = np.empty(8, dtype=np.uint64)  # the four 64-bit state words as 32-bit halves, low half first
    entropy_words = entropy.shape[1]
    for s in range(entropy.shape[0]):
        # 1. SeedSequence: mix the entropy into the pool, then draw 8 words from it
        hash_const[0] = _INIT_A
        for i in range(_POOL_SIZE):
            pool[i] = _hashmix(entropy[s, i] if i < entropy_words else _ZERO, hash_const)
        for source in range(_POOL_SIZE):
            for target in range(_POOL_SIZE):
                if source != target:
                    pool[target] = _mix(pool[target], _hashmix(pool[source], hash_const))
        for source in range(_POOL_SIZE, entropy_words):
            for target in range(_POOL_SIZE):
                pool[target] = _mix(pool[target], _hashmix(entropy[s, source], hash_const))
        hash_b = _INIT_B
        for i in range(8):
            value = (pool[i % _POOL_SIZE] ^ hash_b) & _LOW32
            hash_b = (hash_b * _MULT_B) & _LOW32
            value = (value * hash_b) & _LOW32
            words[i] = value ^ (value >> _16)
        seed_high, seed_low = words[0] | (words[1] << _32), words[2] | (words[3] << _32)
        sequence_high, sequence_low = words[4] | (words[5] << _32), words[6] | (words[7] << _32)
        # 2. PCG64's seeding: increment = sequence * 2 + 1; state = 0, step, add the seed, step
        inc_high, inc_low = (sequence_high << _ONE) | (sequence_low >> _63), (sequence_low << _ONE) | _ONE
        high, low = _step(_ZERO, _ZERO, inc_high, inc_low)
        low, carry = low + seed_low, _ZERO
        if low < seed_low:
            carry = _ONE
        high = high + seed_high + carry
        high, low = _step(high, low, inc_high, inc_low)
        # 3. Poisson(1) by multiplication, one uniform double per step
        for r in range(draws.shape[1]):
            count, product = 0, 1.0
            while True:
                high, low = _step(high, low, inc_high, inc_low)
                mixed, rotation = high ^ low, high >> _58
                bits = (mixed >> rotation) | (mixed << ((_64 - rotation) & _63))
                product *= np.float64(bits >> _11) * _TO_UNIT
                if product > exp_minus_one:
                    count += 1
                else:
                    break
            draws[s, r] = count
