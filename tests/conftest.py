"""Shared test settings."""

from hypothesis import HealthCheck, settings

# Property tests run a fixed number of examples so the suite stays well under a few minutes.
settings.register_profile(
    "bookend", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("bookend")
