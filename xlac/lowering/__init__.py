"""IR -> StableHLO text. Importing this package attaches an emitter to every primitive."""
from xlac.lowering import emitters, emitters_casts, emitters_contraction, emitters_control, emitters_fft, emitters_linalg, sharding  # noqa: F401,E501
from xlac.lowering.module import lower_graph, lower_module

__all__ = ["lower_graph", "lower_module"]
