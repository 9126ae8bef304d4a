"""Put ``bench/`` on ``sys.path``: the benchmark's pure modules import as ``placement_quality``."""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
