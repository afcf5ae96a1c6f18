"""Send N fuzzed requests to the real device's phone app and say what they did.

Why: "no request can break the game" is checked here over thousands of requests, not only the
ones the tests name. The app is the one ``cubetower serve`` runs (the demo camera replay, the
packaged cube model, gpiozero's mock pins), in a throw-away data folder; requests go through
Flask's test client, so no port is opened. After the run the device is built again on the same
data (a restart) and the game must load to the same state. ``companion/fuzz.py`` says what the
requests are.

    python scripts/fuzz-api.py            # 10,000 requests, seed 0
    python scripts/fuzz-api.py -n 500 --seed 7

Prints the counts by status and the checks; the exit status is 1 when any request answered 5xx,
a refusal had no reason in words, a retry was applied twice, a write without the table's current
code was taken, or the game did not survive. The fuzzing phone plays with the table code, and
keeps the new one when it asks for a new code (as the page does).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.fuzz import fuzz
from firmware.config import Config, with_overrides
from firmware.service import build_device, load_detector
from firmware.sources import DemoSource


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="requests to send (10000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL)  # the refusals are the point, not news
    detector = load_detector()  # once: a restart of the device does not retrain anything

    with tempfile.TemporaryDirectory(prefix="cubetower-fuzz-") as data_dir:
        config = with_overrides(Config(), data_dir=data_dir)

        def make_app():
            factory = MockFactory(pin_class=MockPWMPin)
            device = build_device(config, DemoSource(), pin_factory=factory, detector=detector)
            device.start()
            app = device.app()

            def close():
                device.stop()
                factory.reset()

            client = app.test_client()  # a phone at the table: it has the code
            client.environ_base["HTTP_X_TABLE_CODE"] = device.table_code.value
            return client, close

        started = time.perf_counter()
        report = fuzz(make_app, args.n, args.seed)
        seconds = time.perf_counter() - started
    print(report.summary())
    print(f"seed {args.seed}, {seconds:.1f} s")
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
