"""Tracing: tracer objects, the tracing context, typed primitive helpers and pytrees."""
