import sqlite3
import threading

import pytest

from companion.store import SeqConflict, Store, StoreError


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "data" / "cubetower.sqlite", keep_pictures=2)
    yield s
    s.close()


def test_readings_survive_reopening(tmp_path):
    path = tmp_path / "db.sqlite"
    first = Store(path)
    rid = first.add_reading("f1", 100.0, {"counts": {"red": 2}}, b"jpeg")
    first.close()
    again = Store(path)
    assert again.latest_reading() == (rid, {"counts": {"red": 2}})
    assert again.picture(rid) == b"jpeg"
    again.close()


def test_only_recent_pictures_are_kept(store):
    ids = [store.add_reading(f"f{i}", float(i), {"i": i}, b"x" * 10) for i in range(4)]
    assert store.picture(ids[0]) is None
    assert store.picture(ids[-1]) == b"x" * 10
    assert [body["i"] for _, body in store.recent_readings(10)] == [3, 2, 1, 0]


def test_events_append_in_order_and_refuse_a_stale_base(store):
    game = store.create_game("test")
    assert store.append_events(game, 0, [{"type": "a"}, {"type": "b"}]) == 2
    with pytest.raises(SeqConflict):
        store.append_events(game, 1, [{"type": "late"}])
    assert [e["type"] for e in store.events(game)] == ["a", "b"]
    assert store.latest_game() == game


def test_two_writers_on_the_same_base_only_one_lands(store):
    game = store.create_game()
    results = []
    barrier = threading.Barrier(2)

    def press(name):
        barrier.wait()
        try:
            store.append_events(game, 0, [{"by": name}])
            results.append(name)
        except SeqConflict:
            results.append("conflict")

    threads = [threading.Thread(target=press, args=(n,)) for n in ("phone1", "phone2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results)[0] == "conflict"
    assert len(store.events(game)) == 1


def test_a_file_that_is_not_a_database_gives_a_clear_error(tmp_path):
    path = tmp_path / "db.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot use data file"):
        Store(path)


def test_committed_events_survive_a_crash_without_close(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    game = store.create_game()
    store.append_events(game, 0, [{"type": "x"}])
    # No close(): a pulled plug. A fresh connection still sees the committed event.
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 1
    raw.close()
