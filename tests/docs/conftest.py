"""Put the repository's root on ``sys.path``: the site's build hooks import as ``mkdocs_hooks``."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
