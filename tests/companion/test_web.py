import pytest
from table_access import playing, policy

from companion.hub import Hub
from companion.store import Store
from companion.tray import TrayBoard
from companion.web.app import DeviceHooks, create_app

READING = {
    "counts": {"blue": 4, "black": 1, "red": 1, "green": 2},
    "cubes": [{"colour": "blue", "x": 10.0, "y": 20.0, "confidence": 0.9}],
    "uncertain": False,
    "warnings": [],
}


@pytest.fixture
def parts(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    board = TrayBoard(store, hub, wall_clock=lambda: 1700000000.0)
    pressed = []
    access = policy(tmp_path)
    app = create_app(board, hub, DeviceHooks(read_now=lambda: pressed.append(1)), access=access)
    yield playing(app.test_client(), access), board, hub, pressed
    store.close()


def test_page_shows_the_seven_colours(parts):
    client, *_ = parts
    page = client.get("/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    for colour in ("blue", "black", "red", "brown", "green", "yellow", "white"):
        assert f'data-count="{colour}"' in html
    assert "/static/app.js" in html


def test_api_tray_before_any_reading_is_an_empty_tray(parts):
    client, *_ = parts
    body = client.get("/api/tray").get_json()
    assert body["frame_id"] is None
    assert body["total"] == 0 and body["actions"] == []


def test_api_tray_returns_the_latest_reading_with_the_phase_offer(parts):
    client, board, *_ = parts
    board.publish_reading("frame-7", READING, b"\xff\xd8jpeg")
    body = client.get("/api/tray").get_json()
    assert body["frame_id"] == "frame-7"
    assert body["read_at"] == 1700000000.0
    assert body["counts"] == {
        "blue": 4, "black": 1, "red": 1, "brown": 0, "green": 2, "yellow": 0, "white": 0
    }
    assert (body["total"], body["ap"], body["gold"]) == (8, 4, 3)
    assert body["actions"] == ["blue", "black", "red", "green"]
    picture = client.get(body["picture"])
    assert picture.status_code == 200 and picture.mimetype == "image/jpeg"
    assert picture.data == b"\xff\xd8jpeg"


def test_api_tray_reports_an_unreadable_frame(parts):
    client, board, *_ = parts
    board.publish_reading("frame-1", READING, None)
    board.publish_error("frame-2", "not an image file (cannot decode)")
    body = client.get("/api/tray").get_json()
    assert body["frame_id"] == "frame-2"
    assert body["error"] == "not an image file (cannot decode)"
    assert body["total"] == 0


def test_stream_sends_a_snapshot_then_updates(parts):
    client, board, hub, _ = parts
    board.publish_reading("frame-1", READING, None)
    response = client.get("/api/stream", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = (c.decode() for c in response.response)
    assert next(chunks).startswith("retry:")
    snapshot = next(chunks)
    assert "event: snapshot" in snapshot and '"frame_id":"frame-1"' in snapshot
    assert hub.subscriber_count == 1
    board.publish_reading("frame-2", {"counts": {"red": 3}}, None)
    update = next(chunks)
    assert "event: tray" in update and '"frame_id":"frame-2"' in update
    response.close()
    assert hub.subscriber_count == 0


def test_read_now_calls_the_device(parts):
    client, _, _, pressed = parts
    assert client.post("/api/tray/read").status_code == 202
    assert pressed == [1]


def test_read_now_without_a_camera_loop_is_a_clear_503(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, access=access)
    response = playing(app.test_client(), access).post("/api/tray/read")
    assert response.status_code == 503
    assert "no camera" in response.get_json()["error"]


def test_missing_picture_and_bad_history_limit(parts):
    client, *_ = parts
    assert client.get("/api/tray/picture/999.jpg").status_code == 404
    assert client.get("/api/tray/history?limit=abc").status_code == 400
    assert client.get("/api/tray/history?limit=5").get_json() == {"readings": []}


def test_board_restores_the_last_reading_after_a_restart(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    TrayBoard(store, Hub()).publish_reading("frame-9", READING, b"jpg")
    store.close()
    store = Store(path)
    latest = TrayBoard(store, Hub()).latest()
    assert latest["frame_id"] == "frame-9" and latest["ap"] == 4
    store.close()


@pytest.fixture
def corner_client(tmp_path):
    """The app with a device that takes corners: ValueError for bad ones, like the firmware."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    taken = []

    def set_corners(value):
        if value is not None and len(value) != 4:
            raise ValueError("corners must be a list of four [x, y] points")
        taken.append(value)
        return {"corners": value, "colours_learned_from": 0}

    hooks = DeviceHooks(set_corners=set_corners, camera_picture=lambda: b"\xff\xd8frame",
                        calibration_status=lambda: {"corners": None, "colours_learned_from": 2})
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, hooks, access=access)
    yield playing(app.test_client(), access), taken
    store.close()


def test_tapped_corners_reach_the_device(corner_client):
    client, taken = corner_client
    corners = [[1, 2], [30, 2], [30, 20], [1, 20]]
    response = client.post("/api/calibrate/corners", json={"corners": corners})
    assert response.status_code == 200 and response.get_json()["corners"] == corners
    assert client.post("/api/calibrate/corners", json={"corners": None}).status_code == 200
    assert taken == [corners, None]


@pytest.mark.parametrize("body", [None, [], {"points": []}, "corners"])
def test_a_corners_request_without_corners_is_a_clear_400(corner_client, body):
    client, taken = corner_client
    response = client.post("/api/calibrate/corners", json=body)
    assert response.status_code == 400 and "corners" in response.get_json()["error"]
    assert response.get_json()["kind"] == "BadInput"
    assert taken == []


def test_every_device_refusal_says_its_kind(tmp_path):
    """The README's promise: every refusal is JSON with ``error`` and ``kind``."""
    class NotNow(RuntimeError):
        pass

    def refuse_now(*_):
        raise NotNow("no picture from the camera yet; wait a moment and try again")

    def refuse_corners(_):
        raise ValueError("the tray cannot be read with those corners")

    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    access = policy(tmp_path)
    busy = create_app(TrayBoard(store, hub), hub,
                      DeviceHooks(set_corners=refuse_now, calibrate_empty=refuse_now),
                      access=access)
    bare = create_app(TrayBoard(store, hub), hub, access=access)
    client, none = playing(busy.test_client(), access), playing(bare.test_client(), access)
    wrong = create_app(TrayBoard(store, hub), hub, DeviceHooks(set_corners=refuse_corners),
                       access=access)
    four = {"corners": [[1, 2], [30, 2], [30, 20], [1, 20]]}
    for response, status, kind in [
        (client.post("/api/calibrate/corners", json=four), 409, "NotNow"),
        (client.post("/api/calibrate/empty"), 409, "NotNow"),
        (playing(wrong.test_client(), access).post("/api/calibrate/corners", json=four), 400,
         "ValueError"),
        (none.post("/api/calibrate/corners", json=four), 503, "NoCamera"),
        (none.post("/api/calibrate/empty"), 503, "NoCamera"),
        (none.get("/api/calibration"), 503, "NoCamera"),
        (none.post("/api/tray/read"), 503, "NoCamera"),
        (none.get("/api/camera/picture.jpg"), 404, "NotFound"),
        (none.get("/api/tray/picture/7.jpg"), 404, "NotFound"),
    ]:
        assert response.status_code == status
        assert response.get_json()["kind"] == kind and response.get_json()["error"]
    store.close()


def test_corners_the_device_refuses_are_a_400_with_its_reason(corner_client):
    client, _ = corner_client
    response = client.post("/api/calibrate/corners", json={"corners": [[1, 2]]})
    assert response.status_code == 400
    assert response.get_json()["error"] == "corners must be a list of four [x, y] points"


def test_the_camera_picture_and_calibration_status(corner_client):
    client, _ = corner_client
    picture = client.get("/api/camera/picture.jpg")
    assert picture.status_code == 200 and picture.mimetype == "image/jpeg"
    assert picture.headers["Cache-Control"] == "no-store"
    assert client.get("/api/calibration").get_json()["colours_learned_from"] == 2


def test_no_camera_means_no_picture_and_no_corners(parts):
    client, *_ = parts
    assert client.get("/api/camera/picture.jpg").status_code == 404
    assert client.post("/api/calibrate/corners", json={"corners": None}).status_code == 503
    assert client.get("/api/calibration").status_code == 503
