"""``bookend validate``: the influence validator. Measure a model's influence profile, test the
theory on it, and hand it to placement.

Two sources, one pipeline (:func:`validate_influence`): an architecture with random weights,
averaged over initialisations (Step 0, the theory's own regime), or trained weights over windows of
natural text. The Jacobian-norm influence of every position on the final token is measured
(:mod:`bookend_rag_lab.influence`), compared with the Cesàro theory and fitted
(:mod:`bookend_rag_lab.fitting.theory_fit`); with ``rope_compare`` the Step-0 measurement is
repeated with rotary embeddings switched off. The report's fields:
:func:`bookend_rag_lab.influence.runner.make_report`; the measured profile can be saved as a profile
placement accepts, and a parametric profile fitted to it
(:func:`bookend_rag_lab.fitting.profile.fit_position_profile`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from bookend_rag import ModelSpec
from bookend_rag_lab.fitting.profile import fit_position_profile
from bookend_rag_lab.fitting.theory_fit import fit_depth_share, log_binned
from bookend_rag_lab.influence import runner
from bookend_rag_lab.influence.architectures import DEFAULT_VOCAB_CAP, nominal_spec
from bookend_rag_lab.influence.jacobian import InfluenceMeasurement
from bookend_rag_lab.models.local import load_trained
from bookend_rag_lab.progress import progress_bar
from bookend_rag_lab.report.figures import plot_profile
from bookend_rag_lab.report.influence import influence_summary

__all__ = ["InfluenceResult", "validate_influence"]


@dataclass
class InfluenceResult:
    """What :func:`validate_influence` returns: the JSON report and the files written."""

    report: dict[str, Any]
    files: list[Path] = field(default_factory=list)


@dataclass
class _Measured:
    """One measurement before the report: what each source hands on."""

    measurement: InfluenceMeasurement
    nominal: ModelSpec
    label: str
    settings: dict[str, Any]
    step0: dict[str, Any] | None = None  # the Step-0 arguments, for rope_compare


def validate_influence(
    model: str | Path | None = None,
    *,
    weights: str | Path | None = None,
    n_tokens: int = 512,
    seeds: int = 2,
    probes: int = 8,
    inputs: int | None = None,
    rope: bool = True,
    rope_compare: bool = False,
    width: int | None = None,
    vocab_cap: int | None = DEFAULT_VOCAB_CAP,
    text: str | None = None,
    precision: str = "bfloat16",
    max_depth: float = 2000.0,
    json_path: str | Path | None = None,
    plot: str | Path | None = None,
    profile_out: str | Path | None = None,
    fitted_out: str | Path | None = None,
    settings: Mapping[str, Any] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> InfluenceResult:
    """Measure, compare, fit; write the report, plot and profiles; see
    ``bookend validate --help``.

    Args:
        model: a preset name or ``config.json`` path: its architecture with random weights, over
            ``seeds`` initialisations (Step 0). Exactly one of ``model`` and ``weights``.
        weights: trained weights (a model directory, a ``.gguf`` file or a named weight).
        n_tokens, probes: the sequence length N and the Hutchinson probes per input.
        inputs: inputs per initialisation (default 1) or text windows of trained weights
            (default 4).
        rope, rope_compare: rotary embeddings on or off; measure Step 0 again with them off.
        width, vocab_cap: shrink the hidden width; cap the vocabulary (Step 0, CPU runs).
        text: natural text instead of random tokens (trained weights: default the bundled text).
        precision: ``"bfloat16"`` autocast or ``"float32"``.
        max_depth: the upper bound of the ``H`` fit.
        json_path, plot, profile_out, fitted_out: the JSON report, the PNG, the measured
            per-position profile, and the parametric profile fitted to it by least squares.
        settings: more settings to record (the command line adds its threads).
        progress, log: progress bars on stderr; where the summary goes (default nowhere).

    Raises:
        ValueError: for no or two sources, ``rope_compare`` without a Step-0 model measured with
            RoPE on, or bad sizes.
    """
    say = log or (lambda _message: None)
    if (model is None) == (weights is None):
        raise ValueError("give either a MODEL (preset or config.json) or --weights PATH")
    if rope_compare and (weights is not None or not rope):
        raise ValueError("--rope-compare needs a Step-0 MODEL measured with --rope on")
    recorded: dict[str, Any] = {
        "model": None if model is None else str(model),
        "weights": None if weights is None else str(weights),
        "n_tokens": n_tokens,
        "probes": probes,
        "precision": precision,
        "input": "random tokens" if text is None and weights is None else "natural text",
        **(settings or {}),
    }
    if weights is not None:
        run = _measure_trained(weights, n_tokens, inputs or 4, probes, text, precision, progress)
    else:
        step0: dict[str, Any] = {
            "n_tokens": n_tokens,
            "seeds": seeds,
            "n_probes": probes,
            "n_inputs": inputs or 1,
            "width": width,
            "vocab_cap": vocab_cap,
            "text": text,
            "precision": precision,
        }
        run = _measure_step0(str(model), step0, rope, progress)
    run.settings = recorded | run.settings
    report = runner.make_report(run.measurement, run.nominal, run.settings, max_depth=max_depth)
    if rope_compare and run.step0 is not None:
        report["rope_off"] = _rope_off(str(model), run, max_depth, progress)
    say(influence_summary(report))
    return InfluenceResult(
        report, _outputs(run, report, json_path, plot, profile_out, fitted_out, say)
    )


def _measure_trained(
    weights: str | Path,
    n_tokens: int,
    n_inputs: int,
    probes: int,
    text: str | None,
    precision: str,
    progress: bool,
) -> _Measured:
    """Trained weights: the Jacobian profile over text windows."""
    model = load_trained(weights)
    with progress_bar(n_inputs, "validate", unit="input", enabled=progress, leave=False) as bar:
        measurement = runner.measure_trained(
            model,
            n_tokens=n_tokens,
            n_inputs=n_inputs,
            n_probes=probes,
            text=text,
            precision=precision,
            progress=bar.update,
        )
    nominal = ModelSpec.from_hf_config(model.lm.config.to_dict())
    settings = {"inputs": n_inputs, "source": model.name}
    return _Measured(measurement, nominal, f"{Path(model.name).name} (measured)", settings)


def _measure_step0(model: str, step0: dict[str, Any], rope: bool, progress: bool) -> _Measured:
    """An architecture: the Step-0 profile over random initialisations."""
    total = step0["seeds"] * step0["n_inputs"]
    with progress_bar(total, "validate", unit="input", enabled=progress, leave=False) as bar:
        measurement, config = runner.measure_step0(model, rope=rope, progress=bar.update, **step0)
    settings = {
        "seeds": step0["seeds"],
        "inputs": step0["n_inputs"],
        "rope": "on" if rope else "off",
        "width": step0["width"],
        "vocab_cap": step0["vocab_cap"],
        "hidden_size": int(config.hidden_size),
        "num_attention_heads": int(config.num_attention_heads),
        "model_type": str(config.model_type),
    }
    label = f"{model} step-0 (measured)"
    return _Measured(measurement, nominal_spec(config), label, settings, step0)


def _rope_off(model: str, run: _Measured, max_depth: float, progress: bool) -> dict[str, Any]:
    """The same Step-0 measurement with RoPE off, compared and fitted."""
    assert run.step0 is not None
    total = run.step0["seeds"] * run.step0["n_inputs"]
    with progress_bar(total, "rope off", unit="input", enabled=progress, leave=False) as bar:
        off, _ = runner.measure_step0(model, rope=False, progress=bar.update, **run.step0)
    on_profile, off_profile = run.measurement.mean, off.mean
    return {
        "measured": off_profile.tolist(),
        "spearman_vs_rope_on": float(spearmanr(on_profile[:-1], off_profile[:-1]).statistic),
        "spearman_log_binned_vs_rope_on": float(
            spearmanr(log_binned(on_profile[:-1]), log_binned(off_profile[:-1])).statistic
        ),
        "fit": fit_depth_share(off_profile, max_depth=max_depth).to_json(),
        "seconds": off.seconds,
    }


def _outputs(
    run: _Measured,
    report: dict[str, Any],
    json_path: str | Path | None,
    plot: str | Path | None,
    profile_out: str | Path | None,
    fitted_out: str | Path | None,
    say: Callable[[str], None],
) -> list[Path]:
    """The JSON report, the PNG, the measured profile and the profile fitted to it."""
    files = []
    if json_path is not None:
        files.append(Path(json_path))
        files[-1].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if plot is not None:
        inputs, settings = run.settings["inputs"], run.settings
        if run.step0 is None:
            spread, band = f"{inputs} text windows", "window band"
        else:
            spread, band = f"{settings['seeds']} seeds x {inputs} input(s)", "seed band"
        title = f"{run.label}: N={settings['n_tokens']}, {spread}, {settings['probes']} probes"
        files.append(plot_profile(report, plot, title=title, band_label=band))
    if profile_out is None and fitted_out is None:
        return files
    metadata = {"settings": run.settings, "fit": report["fit"], "nominal": report["nominal"]}
    measured = runner.measured_profile(run.measurement, label=run.label, metadata=metadata)
    if profile_out is not None:
        files.append(measured.save(profile_out))
    if fitted_out is not None:
        fitted = fit_position_profile(measured, label=run.label.replace("(measured)", "(fitted)"))
        files.append(fitted.save(fitted_out))
        say(
            f"fitted profile: {fitted!r}, log_rmse={fitted.metadata['fit']['log_rmse']:.4f}, "
            f"standard errors {dict(fitted.standard_errors)}"
        )
    return files
