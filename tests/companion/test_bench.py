from companion.bench import main


def test_the_game_benchmark_prints_measured_figures(capsys):
    assert main(["--events", "300"]) == 0
    out = capsys.readouterr().out
    assert "command (rules + fsync'd write)" in out
    assert "cold load of a 300-event log" in out
    assert "KiB" in out
