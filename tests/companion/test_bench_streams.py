import re

from companion.bench_streams import main


def test_the_stream_benchmark_measures_a_real_server(capsys):
    status = main(["--phones", "6", "--reloaders", "2", "--seconds", "2", "--readings", "3",
                   "--api-rate", "10", "--threads", "4", "--streams", "12", "--pictures"])
    out = capsys.readouterr().out
    assert status == 0, out
    answered = re.search(r"API \((\d+) answered, 0 failed\)\s+p50 .* p95 .* max", out)
    assert answered and int(answered.group(1)) >= 10
    all_reached, sent = re.search(r"readings that reached all: (\d+)/(\d+)", out).groups()
    assert all_reached == sent and int(sent) >= 3
    assert re.search(r"reloads: [1-9]\d* done, 0 failed", out)
    assert re.search(r"pictures fetched: (\d+)", out).group(1) == str(6 * int(sent))
