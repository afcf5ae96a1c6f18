"""Vision tests import the drawn-scene helper (``synth``) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
