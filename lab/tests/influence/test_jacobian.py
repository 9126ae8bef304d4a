"""Hutchinson estimate against the exact Jacobian norm; attention-share hooks; measurement shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from bookend_rag_lab.influence.architectures import random_model
from bookend_rag_lab.influence.attn_share import AttentionShareRecorder
from bookend_rag_lab.influence.jacobian import hutchinson_sq_norms, measure_influence


def _exact_blocks(model: torch.nn.Module, embeds: torch.Tensor) -> torch.Tensor:
    """Exact Jacobian blocks d h_N / d x_j as ``[N, d_out, d_in]``."""

    def final(x: torch.Tensor) -> torch.Tensor:
        return model(inputs_embeds=x).last_hidden_state[0, -1]

    jac = torch.autograd.functional.jacobian(final, embeds)  # [d_out, 1, N, d_in]
    return jac[:, 0].permute(1, 0, 2)


def test_hutchinson_matches_exact_jacobian_within_its_error(
    gpt2_config: Callable[..., Any],
) -> None:
    model = random_model(gpt2_config(), seed=0)
    embeds = model.get_input_embeddings()(torch.randint(0, 300, (1, 12))).detach()
    blocks = _exact_blocks(model, embeds)
    gram = blocks @ blocks.transpose(1, 2)  # A_j = J_j J_j^T
    exact = gram.diagonal(dim1=1, dim2=2).sum(-1)
    k = 256
    # Var of one Rademacher quadratic form: 2 (|A|_F^2 - sum_i A_ii^2); the mean of k has 1/k.
    var = 2 * (gram.pow(2).sum((1, 2)) - gram.diagonal(dim1=1, dim2=2).pow(2).sum(-1)) / k
    estimate = hutchinson_sq_norms(model, embeds, k, torch.Generator().manual_seed(1))[0]
    z = (estimate - exact).abs() / var.sqrt()
    assert float(z.max()) < 5.0, z
    # and the profile itself: relative error of the norms within a few percent
    rel = (estimate.sqrt() / exact.sqrt() - 1).abs()
    assert float(rel.max()) < 0.05


def test_probe_chunks_do_not_change_the_estimate(qwen2_config: Callable[..., Any]) -> None:
    model = random_model(qwen2_config(), seed=0)
    embeds = model.get_input_embeddings()(torch.randint(0, 300, (2, 10))).detach()
    a = hutchinson_sq_norms(model, embeds, 6, torch.Generator().manual_seed(3), probe_chunk=6)
    b = hutchinson_sq_norms(model, embeds, 6, torch.Generator().manual_seed(3), probe_chunk=2)
    assert torch.allclose(a, b, rtol=1e-5)
    assert a.shape == (2, 10)


def test_attention_share_hooks_give_one_share_per_layer_in_unit_interval(
    qwen2_config: Callable[..., Any],
) -> None:
    model = random_model(qwen2_config(layers=3), seed=0)
    with torch.no_grad(), AttentionShareRecorder(model) as rec:
        model(inputs_embeds=torch.randn(1, 16, 64))
    shares = rec.shares()
    assert shares.shape == (3,)
    assert np.all((shares > 0) & (shares < 1))
    # hooks are removed on exit: a further pass records nothing new
    before = rec.shares().copy()
    with torch.no_grad():
        model(inputs_embeds=torch.randn(1, 16, 64))
    assert np.array_equal(before, rec.shares())


def test_measurement_averages_seeds_and_inputs(gpt2_config: Callable[..., Any]) -> None:
    config = gpt2_config()

    def models():  # type: ignore[no-untyped-def]
        for seed in range(2):
            yield seed, random_model(config, seed)

    def inputs(model, seed):  # type: ignore[no-untyped-def]
        ids = torch.randint(0, 300, (3, 20), generator=torch.Generator().manual_seed(seed))
        return model.get_input_embeddings()(ids)

    m = measure_influence(models(), inputs, n_probes=4)
    assert m.samples.shape == (6, 20)
    average = m.samples.mean(axis=0)
    np.testing.assert_allclose(m.mean, average / average.sum())
    # The band spans the two seed means (two rows: the 10th and 90th percentiles lie between).
    seeds = np.asarray(m.sample_seeds)
    per_seed = np.array([m.samples[seeds == s].mean(axis=0) for s in (0, 1)])
    low, high = m.band()
    np.testing.assert_allclose(low, per_seed.min(axis=0) + 0.1 * np.ptp(per_seed, axis=0))
    np.testing.assert_allclose(high, per_seed.min(axis=0) + 0.9 * np.ptp(per_seed, axis=0))
    assert m.attn_share.shape == (2, 2)
