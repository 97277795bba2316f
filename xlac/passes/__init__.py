"""Passes over the IR and the pipeline that runs them."""
from xlac.passes.pipeline import PASSES, run_passes

__all__ = ["PASSES", "run_passes"]
