"""The one way the device keeps a small file: whole after a power cut, whole under two writers."""

import os
import stat
import threading

import pytest

from companion import durable
from companion.durable import write_durably


def partials(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".partial")]


def test_the_file_holds_exactly_the_bytes_with_the_permissions_asked(tmp_path):
    path = tmp_path / "deeper" / "code.txt"
    write_durably(path, b"ABC234\n", mode=0o600)
    assert path.read_bytes() == b"ABC234\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    write_durably(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o644
    assert partials(path.parent) == []


def test_a_write_cut_short_keeps_the_old_file_and_leaves_no_partial(tmp_path, monkeypatch):
    path = tmp_path / "calibration.json"
    write_durably(path, b'{"old": true}')

    def power_cut(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(durable.os, "fsync", power_cut)
    with pytest.raises(OSError, match="Input/output"):
        write_durably(path, b'{"new": true}')
    assert path.read_bytes() == b'{"old": true}'
    assert partials(tmp_path) == []


def test_two_writers_at_once_both_succeed_and_one_of_them_wins_whole(tmp_path):
    path = tmp_path / "empty.jpg"
    bodies = [bytes([value]) * 50_000 for value in (1, 2, 3)]
    errors: list[BaseException] = []

    def write_many(body):
        try:
            for _ in range(30):
                write_durably(path, body)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write_many, args=(body,)) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_bytes() in bodies
    assert os.listdir(tmp_path) == ["empty.jpg"]


def test_a_folder_that_cannot_be_made_is_an_os_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    with pytest.raises(OSError):
        write_durably(blocker / "code.txt", b"x")
