"""A NumPy language model's decode loop with one compile (issue 34): the Llama-style model of
tests/numpy_llama.py, unmodified, its ``__call__`` compiled with no static argument: in the decode steps the
rotary tables are read at ``start_pos:start_pos + L``, the caches written there and read up to
``start_pos + L``, all with ``start_pos`` traced. Tokens and caches against NumPy's; traces counted."""
import copy

import numpy as np
import pytest

import xlac
from tests.numpy_llama import Llama, greedy_decode

PROMPT = np.array([[1, 5, 7, 2], [3, 3, 9, 0]])
DECODE_STEPS = 32


@pytest.mark.parametrize("placed", ["numpy_state", "to_device"])
def test_the_llama_decodes_32_steps_as_numpy_with_one_trace_for_every_decode_step(placed):
    reference = Llama(seed=0, max_seq_len=PROMPT.shape[1] + DECODE_STEPS + 1)
    model = copy.deepcopy(reference)
    if placed == "to_device":
        xlac.to_device(model)
    expected = greedy_decode(reference, PROMPT, n_new=DECODE_STEPS + 1)
    step = xlac.compile(model)                         # nothing static
    counts = []

    def counted_step(tokens, start_pos):
        logits = step(tokens, start_pos)
        info = step.cache_info()
        counts.append((info.traces, info.compiles))
        return logits
    np.testing.assert_array_equal(greedy_decode(counted_step, PROMPT, n_new=DECODE_STEPS + 1), expected)
    for mine, theirs in zip(model.layers, reference.layers):
        for cache in ("cache_k", "cache_v"):
            np.testing.assert_allclose(np.asarray(getattr(mine.attention, cache)), getattr(theirs.attention, cache),
                                       rtol=1e-10, atol=1e-12)
    # The prompt: traced until np.zeros((L, start_pos)) needed start_pos as an int, then traced with its
    # value (one compile); every decode step: one more trace and compile, the first, whatever the position.
    assert counts[0] == (2, 1)
    assert counts[1:] == [(3, 2)] * DECODE_STEPS


def test_a_decode_step_at_any_position_is_the_same_program():
    model = Llama(seed=1)
    token = np.array([[4], [6]])
    lowered = xlac.compile(copy.deepcopy(model))
    assert lowered.lower(token, 3).as_text() == lowered.lower(token, 11).as_text()
    decode_step = xlac.compile(copy.deepcopy(model))
    for position in (0, 7, 15):           # filling the cache position by position, as NumPy does
        reference_logits = model(token, position)
        np.testing.assert_allclose(np.asarray(decode_step(token, position)), reference_logits, rtol=1e-10)
    assert decode_step.cache_info().traces == 1


def test_a_numpy_integer_start_position_stays_traced_and_the_prompt_names_the_line_needing_it():
    """The prompt's mask is ``np.zeros((L, start_pos))``: a shape from the position, which only a Python int
    argument can give (its value is taken); a NumPy integer is a traced value, and the error names the line."""
    with pytest.raises(xlac.TracerConversionError, match=r"(?s)shape.*static argument.*\n  at .*numpy_llama.py:\d+"):
        xlac.compile(Llama(seed=0))(PROMPT, np.int64(0))
