import sqlite3
import threading

import pytest

from companion.store import DamagedStore, SeqConflict, Store, StoreError


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


def kept_ids(store) -> list[int]:
    return sorted(i for i, _ in store.recent_readings(10**6))


def test_only_the_newest_readings_are_kept_and_ids_keep_growing(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path, keep_pictures=2, keep_readings=5)
    ids = [store.add_reading(f"f{i}", float(i), {"i": i}, b"p") for i in range(12)]
    assert ids == sorted(set(ids))
    assert kept_ids(store) == ids[-5:]
    assert store.reading(ids[0]) is None and store.picture(ids[0]) is None
    assert store.reading(ids[-1]) == {"i": 11}
    assert [store.picture(i) for i in ids[-3:]] == [None, b"p", b"p"]
    game = store.create_game("g", [{"type": "a"}])
    assert store.reading_mark(game, 0) == ids[-1]  # the newest reading is never deleted
    store.close()
    # reopened (a restart): ids go on from the last one ever given, never from a deleted one
    store = Store(path, keep_pictures=2, keep_readings=5)
    more = [store.add_reading(f"g{i}", 0.0, {"j": i}, None) for i in range(3)]
    assert more == list(range(ids[-1] + 1, ids[-1] + 4))
    assert kept_ids(store) == ids[-2:] + more
    store.close()


def test_a_smaller_cap_prunes_an_older_file_at_the_next_reading(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    ids = [store.add_reading(f"f{i}", 0.0, {}, None) for i in range(30)]
    store.close()
    store = Store(path, keep_readings=4)
    assert len(kept_ids(store)) == 30
    newest = store.add_reading("new", 0.0, {}, None)
    assert kept_ids(store) == [*ids[-3:], newest]
    store.close()
    with pytest.raises(ValueError, match="keep_readings must be at least 1"):
        Store(path, keep_readings=0)


def test_the_data_file_stops_growing_once_the_cap_is_reached(tmp_path):
    """Deleted readings free their pages and SQLite fills them again: the file levels off."""
    path = tmp_path / "db.sqlite"
    store = Store(path, keep_pictures=20, keep_readings=200)
    body = {"counts": {"blue": 3, "red": 1}, "cubes": [{"x": i, "y": i} for i in range(12)]}

    def fill(n: int) -> int:
        for _ in range(n):
            store.add_reading("f", 0.0, body, b"j" * 20_000)
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return path.stat().st_size

    at_cap = fill(200)
    sizes = [fill(100) for _ in range(4)]  # up to 3x the cap
    assert len(kept_ids(store)) == 200
    assert max(sizes) <= at_cap * 1.1, (at_cap, sizes)
    assert sizes[-1] == sizes[-2], sizes
    store.close()


def test_events_append_in_order_and_refuse_a_stale_base(store):
    game = store.create_game("test", [{"type": "a"}])
    assert store.append_events(game, 1, [{"type": "b"}, {"type": "c"}]) == 3
    with pytest.raises(SeqConflict):
        store.append_events(game, 1, [{"type": "late"}])
    assert [e["type"] for e in store.events(game)] == ["a", "b", "c"]
    assert store.latest_game() == game


def test_two_writers_on_the_same_base_only_one_lands(store):
    game = store.create_game("", [{"type": "created"}])
    results = []
    barrier = threading.Barrier(2)

    def press(name):
        barrier.wait()
        try:
            store.append_events(game, 1, [{"by": name}])
            results.append(name)
        except SeqConflict:
            results.append("conflict")

    threads = [threading.Thread(target=press, args=(n,)) for n in ("phone1", "phone2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results)[0] == "conflict"
    assert len(store.events(game)) == 2


def test_a_file_that_is_not_a_database_gives_a_clear_error(tmp_path):
    path = tmp_path / "db.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(DamagedStore, match="is damaged: file is not a database"):
        Store(path)


def test_committed_events_survive_a_crash_without_close(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    game = store.create_game("", [{"type": "created"}])
    store.append_events(game, 1, [{"type": "x"}])
    # No close(): a pulled plug. A fresh connection still sees the committed event.
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2
    raw.close()


def test_a_game_and_its_first_events_are_one_transaction(store):
    """An event that cannot be written (NaN is not JSON) leaves no game row behind either."""
    with pytest.raises(ValueError):
        store.create_game("half", [{"type": "created"}, {"type": "seated", "x": float("nan")}])
    assert store.games() == [] and store.latest_game() is None


def test_a_failed_insert_rolls_the_whole_game_back(store, monkeypatch):
    """The crash the transaction covers: the row is inserted, then the events' insert fails."""
    original = store._insert_events

    def crash(*args):
        original(*args)
        raise OSError("power cut")

    monkeypatch.setattr(store, "_insert_events", crash)
    with pytest.raises(OSError):
        store.create_game("half", [{"type": "created"}])
    monkeypatch.undo()
    assert store.games() == []
    assert store.event_count(1) == 0


def test_an_older_file_gets_the_new_columns_and_skips_an_empty_game(tmp_path):
    path = tmp_path / "old.sqlite"
    raw = sqlite3.connect(path)
    raw.executescript(
        "CREATE TABLE games (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at REAL NOT NULL,"
        " title TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE events (game_id INTEGER NOT NULL REFERENCES games(id),"
        " seq INTEGER NOT NULL, created_at REAL NOT NULL, body TEXT NOT NULL,"
        " PRIMARY KEY (game_id, seq));"
        "INSERT INTO games VALUES (1, 1.0, 'played');"
        "INSERT INTO events VALUES (1, 0, 1.0, '{\"type\": \"a\"}');"
        "INSERT INTO games VALUES (2, 2.0, 'killed while being made');"
    )
    raw.commit()
    raw.close()
    store = Store(path)
    assert store.latest_game() == 1  # game 2 has no events: no game anyone can play
    store.append_events(1, 1, [{"type": "b"}], ("k" * 16, "fp"))
    assert store.idempotent("k" * 16) == (1, 2, "fp")
    store.close()


def test_an_idempotency_key_is_kept_with_the_last_event(store):
    game = store.create_game("", [{"type": "a"}, {"type": "b"}], ("new-game-key-0001", "f1"))
    assert store.idempotent("new-game-key-0001") == (game, 2, "f1")
    store.append_events(game, 2, [{"type": "c"}], ("command-key-00001", "f2"))
    assert store.idempotent("command-key-00001") == (game, 3, "f2")
    assert store.idempotent("never-used-key-01") is None
    with pytest.raises(sqlite3.IntegrityError):  # one key, one write
        store.append_events(game, 3, [{"type": "d"}], ("command-key-00001", "f2"))
    assert store.event_count(game) == 3


def test_ids_beyond_sqlites_integer_range_name_nothing(store):
    huge = 2**70
    assert store.picture(huge) is None
    assert store.events(huge) == [] and store.event_count(huge) == 0


def test_quarantine_moves_rows_and_renumbers_the_rest(store):
    game = store.create_game("", [{"n": 1}, {"n": 2}, {"n": 3}], ("key-of-the-game-1", "f"))
    store.quarantine(game, [(0, '{"n": 1}'), (2, '{"n": 3, "fixed": true}')], {1: "broken"})
    assert store.events(game) == [{"n": 1}, {"n": 3, "fixed": True}]
    assert store.quarantined(game) == [{"seq": 1, "body": '{"n": 2}', "reason": "broken"}]
    assert store.idempotent("key-of-the-game-1") == (game, 2, "f")  # moved with its event


def test_a_data_file_that_opens_but_cannot_be_written_is_refused_at_start(tmp_path, monkeypatch):
    """A card gone read-only after a power cut opens and reads as before: the start must say
    so, not every move of the evening."""
    import sqlite3 as real

    from companion import store as store_module

    path = tmp_path / "db.sqlite"
    Store(path).close()
    connect = real.connect

    def read_only(target, **kw):
        return connect(f"file:{target}?mode=ro", uri=True, **kw)

    monkeypatch.setattr(store_module.sqlite3, "connect", read_only)
    with pytest.raises(StoreError, match="readonly") as refused:
        Store(path)
    assert not isinstance(refused.value, DamagedStore)


def test_a_damaged_data_file_says_it_is_damaged(tmp_path):
    path = tmp_path / "db.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4000)
    with pytest.raises(DamagedStore, match="is damaged") as refused:
        Store(path)
    assert refused.value.path == path
