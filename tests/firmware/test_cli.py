import json
import subprocess
import sys
from pathlib import Path

import pytest
from child_output import ChildOutput

from firmware.cli import build_parser, main
from firmware.sources import DEMO_DIR

DARK_TRAY = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "dark-tray" / "empty.jpg"

COLOURS = ["blue", "black", "red", "brown", "green", "yellow", "white"]
DROP = str(DEMO_DIR / "drop01.jpg")


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_count_json_contract(capsys):
    assert main(["count", "--json", DROP]) == 0
    [line] = json_lines(capsys.readouterr().out)
    assert line["image"] == DROP
    assert list(line["counts"]) == COLOURS
    assert all(isinstance(n, int) and n >= 0 for n in line["counts"].values())
    assert line["total"] == sum(line["counts"].values()) == len(line["cubes"])
    for cube in line["cubes"]:
        assert {"colour", "x", "y", "confidence"} <= set(cube)
        assert cube["colour"] in COLOURS
        assert 0.0 <= cube["confidence"] <= 1.0
        assert 0 <= cube["x"] < 1152 and 0 <= cube["y"] < 648
    assert line["ms"] > 0
    assert isinstance(line["uncertain"], bool)
    assert ("warnings" in line) == line["uncertain"]
    assert all(isinstance(w, str) and w for w in line.get("warnings", []))
    if "doubts" in line:  # the same warnings as data: one each, in the same order
        assert len(line["doubts"]) == len(line["warnings"])
        assert all(isinstance(d["kind"], str) and d["times"] >= 1 for d in line["doubts"])
    corners = line["tray_corners"]
    assert corners is None or (
        len(corners) == 4 and all(len(p) == 2 and all(isinstance(v, float) for v in p)
                                  for p in corners))


def test_count_with_another_model_folder(tmp_path, capsys):
    import shutil

    from vision.detector import MODEL_DIR

    copy = tmp_path / "model"
    shutil.copytree(MODEL_DIR, copy)
    assert main(["count", "--json", "--model", str(copy), DROP]) == 0
    [line] = json_lines(capsys.readouterr().out)
    assert line["image"] == DROP and "counts" in line


def test_a_missing_model_is_a_clear_error(tmp_path, capsys):
    assert main(["count", "--json", "--model", str(tmp_path / "nope"), DROP]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot load the cube model" in captured.err and "nope" in captured.err


def test_count_with_empty_reference(capsys):
    assert main(["count", "--json", "--empty", str(DEMO_DIR / "empty.jpg"), DROP]) == 0
    [line] = json_lines(capsys.readouterr().out)
    assert line["total"] > 0


def test_corrupt_and_missing_files_are_reported_and_the_rest_still_read(tmp_path, capsys):
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8\xff\xe0 this is no jpeg")
    missing = tmp_path / "missing.jpg"
    status = main(["count", "--json", str(corrupt), DROP, str(missing)])
    assert status == 2
    lines = json_lines(capsys.readouterr().out)
    assert [line["image"] for line in lines] == [str(corrupt), DROP, str(missing)]
    assert set(lines[0]) == {"image", "error"} and lines[0]["error"]
    assert "counts" in lines[1]
    assert set(lines[2]) == {"image", "error"} and lines[2]["error"]


def test_count_plain_text_is_one_line_per_image(tmp_path, capsys):
    bad = tmp_path / "bad.png"
    bad.write_text("nope")
    assert main(["count", DROP, str(bad)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith(DROP) and "total" in out[0]
    assert out[1] == f"{bad}: error: not an image file (cannot decode)"  # named once


def test_a_reference_that_cannot_be_used_is_said_once_not_for_every_image(tmp_path, capsys):
    tiny = tmp_path / "tiny.png"
    import cv2
    import numpy as np

    cv2.imwrite(str(tiny), np.zeros((10, 10, 3), np.uint8))
    assert main(["count", "--empty", str(tiny), DROP, DROP]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"cubetower count: empty-tray reference {tiny}: the reference is too small (10x10); "
        "at least 64x64")


def test_unreadable_empty_reference_is_a_clear_error(tmp_path, capsys):
    assert main(["count", "--empty", str(tmp_path / "nope.jpg"), DROP]) == 2
    err = capsys.readouterr().err
    assert "empty-tray reference" in err and err.count("nope.jpg") == 1


def test_console_script_is_installed_and_runs():
    exe = Path(sys.executable).with_name("cubetower")
    if not exe.exists():
        pytest.skip("cubetower console script not installed in this environment")
    done = subprocess.run(
        [str(exe), "count", "--json", DROP], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout)[0]["image"] == DROP


def test_calibrate_saves_the_empty_tray_from_a_source(tmp_path, capsys):
    frames = tmp_path / "frames"
    frames.mkdir()
    import shutil

    shutil.copy(DEMO_DIR / "empty.jpg", frames / "now.jpg")
    data = tmp_path / "data"
    status = main(
        ["calibrate", "--source", str(frames), "--data-dir", str(data), "--wait", "0"]
    )
    assert status == 0
    assert (data / "empty.jpg").is_file()
    assert "saved the empty tray" in capsys.readouterr().out


def test_calibrate_saves_a_dark_tray_but_says_to_light_it(tmp_path, capsys):
    import shutil

    frames = tmp_path / "frames"
    frames.mkdir()
    shutil.copy(DARK_TRAY, frames / "now.jpg")
    data = tmp_path / "data"
    status = main(["calibrate", "--source", str(frames), "--data-dir", str(data), "--wait", "0"])
    assert status == 0 and (data / "empty.jpg").is_file()
    out = capsys.readouterr()
    assert "saved the empty tray" in out.out
    assert "of the tray floor is nearly black" in out.err and "Light the tray" in out.err


def test_calibrate_says_nothing_of_light_for_a_lit_tray(tmp_path, capsys):
    import shutil

    frames = tmp_path / "frames"
    frames.mkdir()
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "now.jpg")
    assert main(["calibrate", "--source", str(frames), "--data-dir", str(tmp_path / "d"),
                 "--wait", "0"]) == 0
    assert "nearly black" not in capsys.readouterr().err


def test_calibrate_refuses_a_picture_with_cubes_unless_told_and_never_uses_the_demo(
        tmp_path, capsys):
    frames = tmp_path / "frames"
    frames.mkdir()
    import shutil

    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "now.jpg")
    data = tmp_path / "data"
    base = ["calibrate", "--source", str(frames), "--data-dir", str(data), "--wait", "0"]
    assert main(base) == 2
    assert "the camera sees" in capsys.readouterr().err and not (data / "empty.jpg").exists()
    assert main([*base, "--anyway"]) == 0 and (data / "empty.jpg").is_file()
    assert main(["calibrate", "--source", "demo", "--data-dir", str(tmp_path / "d2"),
                 "--wait", "0"]) == 2
    assert "the demo replay is no camera" in capsys.readouterr().err


def test_calibrate_with_a_missing_folder_is_a_clear_error(tmp_path, capsys):
    status = main(["calibrate", "--source", str(tmp_path / "nope"), "--wait", "0"])
    assert status == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(("wait", "words"), [("-1", "from 0 to 60 seconds"),
                                             ("nan", "from 0 to 60 seconds"),
                                             ("1e9", "from 0 to 60 seconds"),
                                             ("soon", "not a number of seconds")])
def test_calibrate_waits_a_number_of_seconds_that_can_be(tmp_path, capsys, wait, words):
    with pytest.raises(SystemExit) as ended:
        main(["calibrate", "--source", str(tmp_path), f"--wait={wait}"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "argument --wait" in err and words in err


@pytest.mark.parametrize("port", ["99999", "-5"])
def test_serve_with_a_port_that_cannot_be_is_a_clear_error(tmp_path, capsys, port):
    assert main(["serve", "--source", "demo", "--data-dir", str(tmp_path),
                 f"--port={port}"]) == 2
    assert "--port must be 1-65535" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["256.1.1.1", "192.0.2.99"])
def test_serve_on_a_host_that_is_not_this_machines_is_a_clear_error(tmp_path, capsys, host):
    assert main(["serve", "--source", "demo", "--data-dir", str(tmp_path), "--host", host,
                 "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on {host}" in err and "--host must be an address of this machine" in err
    assert "Traceback" not in err


def test_replay_prints_the_final_sheet(capsys):
    from firmware.cli import main as cli

    example = Path(__file__).resolve().parents[2] / "companion/amerigo/examples/game-2p.jsonl"
    assert cli(["replay", str(example)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["score_sheet"]["final"] is True and body["score_sheet"]["winner"]


def test_the_printed_url_and_qr_code(monkeypatch):

    from firmware import cli

    monkeypatch.setattr(cli, "lan_addresses", lambda: ["192.168.1.23"])
    url = cli.phone_url("0.0.0.0", 8000)
    assert url == "http://192.168.1.23:8000/"
    text = cli.running_text(url, 8000, None)
    assert url in text and "█" in text  # the QR code


def test_lan_addresses_leave_out_loopback():
    from firmware.cli import lan_addresses

    assert all(not a.startswith("127.") for a in lan_addresses())


def test_serve_on_a_busy_port_is_a_clear_error(tmp_path, capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status = main(
            ["serve", "--source", "demo", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(tmp_path)]
        )
    assert status == 2
    assert "cannot listen" in capsys.readouterr().err


def test_serve_starts_and_stops_cleanly_on_sigterm(tmp_path):
    """What systemd does on `systemctl stop`: the service must exit 0, promptly."""
    import signal
    import urllib.request

    exe = Path(sys.executable).with_name("cubetower")
    if not exe.exists():
        pytest.skip("cubetower console script not installed in this environment")
    server = subprocess.Popen(
        [str(exe), "serve", "--source", "demo", "--host", "127.0.0.1", "--port", "0",
         "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        line = ChildOutput(server).wait_for(lambda s: "cubetower is running" in s, what="its URL")
        url = line.split("Open ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/health", timeout=10) as response:
            assert json.load(response)["ok"] is True
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=15) == 0
    finally:
        if server.poll() is None:
            server.kill()


def test_the_join_line_and_a_qr_code_that_joins(monkeypatch):

    import qrcode

    from firmware import cli

    encoded = []
    monkeypatch.setattr(qrcode.QRCode, "add_data", lambda self, data: encoded.append(data))
    monkeypatch.setattr(qrcode.QRCode, "print_ascii", lambda self, **kw: None)
    monkeypatch.setattr(cli, "lan_addresses", lambda: ["192.168.1.23"])
    url = cli.phone_url("0.0.0.0", 8000)
    assert url == "http://192.168.1.23:8000/"
    assert "join code: K7RM2Q\n" in cli.running_text(url, 8000, "K7RM2Q")
    assert encoded == ["http://192.168.1.23:8000/?code=K7RM2Q"]


def test_serve_prints_the_join_code_and_the_new_one_when_a_phone_asks(tmp_path):
    """The real command: its join line is the code the device keeps and asks writes for."""
    import urllib.request

    repo = Path(__file__).resolve().parents[2]
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "firmware.cli", "serve", "--source", "demo", "--host",
             "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path / "data")],
            cwd=repo, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )
    try:
        output = ChildOutput(server, log)
        line = output.wait_for(lambda s: "cubetower is running" in s, what="its URL")
        url = line.split("Open ")[1].split()[0]
        line = output.wait_for(lambda s: s.startswith("join code: "), what="the join line")
        code = line.split(": ", 1)[1].strip()
        assert (tmp_path / "data" / "table-code").read_text().strip() == code
        ask = urllib.request.Request(
            url + "api/access/new-code", method="POST", headers={"X-Table-Code": code}
        )
        with urllib.request.urlopen(ask, timeout=10) as response:
            new = json.load(response)["code"]
        line = output.wait_for(lambda s: s.startswith("join code: "), what="the new join line")
        assert line.strip() == f"join code: {new}" and new != code
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_the_terminal_keeps_each_message_whole_when_threads_talk_at_once():
    """The start, the main loop and a phone's new code print at once: a line ``join code: ...``
    must never land inside another line (a test waiting for it hung CI for 80 minutes)."""
    import threading
    import time

    from firmware import cli

    class SlowOut:
        def __init__(self):
            self.text = ""

        def write(self, text):
            for char in text:  # as slow as a pipe that is full: other threads get in between
                self.text += char
                time.sleep(0)
            return len(text)

        def flush(self):
            pass

    out = SlowOut()
    terminal = cli.Terminal(out)
    messages = [cli.join_text("http://127.0.0.1:8000/", f"CODE{n:02d}") for n in range(6)]
    messages.append("cubetower is listening on port 8000; starting the camera ...")
    threads = [threading.Thread(target=terminal.say, args=(m,)) for m in messages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(line for line in out.text.splitlines() if "CODE" in line) == [
        f"join code: CODE{n:02d}" for n in range(6)
    ]
    assert "cubetower is listening on port 8000; starting the camera ...\n" in out.text


def test_a_settings_file_fixed_while_listening_says_which_server_settings_wait_for_a_restart(
        tmp_path):
    from firmware.cli import _fresh_config
    from firmware.config import Config

    settings = tmp_path / "c.toml"
    settings.write_text('[server]\nmdns_name = "table2"\nport = 8108\n')
    args = build_parser().parse_args(["serve", "--config", str(settings)])
    said = []
    terminal = type("T", (), {"say": lambda self, text: said.append(text)})()
    fresh = _fresh_config(args, Config(), terminal)  # listening on the defaults meanwhile
    assert fresh.server.mdns_name == "table2"
    assert said == ["the settings file's [server] port = 8108, mdns_name = 'table2' take effect "
                    "when cubetower is restarted (the server was already listening)"]
    said.clear()
    _fresh_config(args, fresh, terminal)
    assert said == []
