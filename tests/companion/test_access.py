"""Only the table writes: the table code, same-site writes, known host names, security headers."""

import pytest

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.table_code import ALPHABET, LENGTH, TableCode, TableCodeError
from companion.tray import TrayBoard
from companion.web.access import AccessPolicy, HostNames
from companion.web.app import DeviceHooks, create_app

SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}


@pytest.fixture
def device(tmp_path):
    """(client, code, table, hooks pressed, hub): the app as the firmware builds it."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    table = GameTable(store, hub)
    code = TableCode(tmp_path / "table-code")
    pressed = []
    hooks = DeviceHooks(
        read_now=lambda: pressed.append("read"),
        calibrate_empty=lambda confirmed=False: pressed.append("calibrate") or {"cubes_seen": 0},
        set_corners=lambda corners: pressed.append("corners") or {"corners": corners},
    )
    policy = AccessPolicy(code, HostNames.of(["cubetower", "cubetower.local", "*.club.lan"]))
    app = create_app(TrayBoard(store, hub), hub, hooks, table, access=policy)
    yield app.test_client(), code, table, pressed, hub
    store.close()


def with_code(code):
    return {"X-Table-Code": code if isinstance(code, str) else code.value}


def start(client, code):
    response = client.post("/api/game", json={"players": ["Eva", "Finn"]}, headers=with_code(code))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


# -- the code -------------------------------------------------------------------------------------
def test_the_code_is_short_readable_and_kept_across_a_restart(tmp_path):
    first = TableCode(tmp_path / "data" / "table-code")
    assert len(first.value) == LENGTH and set(first.value) <= set(ALPHABET)
    assert not set("01OIL") & set(ALPHABET)  # nothing to misread across the table
    assert TableCode(tmp_path / "data" / "table-code").value == first.value
    assert (tmp_path / "data" / "table-code").stat().st_mode & 0o077 == 0  # the owner's only


def test_a_new_code_is_kept_too_and_told_to_the_listeners(tmp_path):
    code = TableCode(tmp_path / "table-code")
    told = []
    code.on_change(told.append)
    old = code.value
    new = code.renew()
    assert new != old and told == [new]
    assert TableCode(tmp_path / "table-code").value == new
    assert code.matches(new) and not code.matches(old)


def test_typing_the_code_forgives_case_spaces_and_dashes(tmp_path):
    code = TableCode(tmp_path / "table-code", make=lambda: "ABC234")
    assert code.matches("abc 234") and code.matches("ABC-234") and code.matches(" abc234 ")
    assert not code.matches("ABC235") and not code.matches("") and not code.matches(None)
    assert not code.matches("ABC2345") and not code.matches("ÄBC234")


def test_a_damaged_code_file_gets_a_fresh_code(tmp_path):
    path = tmp_path / "table-code"
    path.write_text("not a code\n")
    code = TableCode(path, make=lambda: "XYZ789")
    assert code.value == "XYZ789" and path.read_text().strip() == "XYZ789"


@pytest.mark.parametrize("written", ["abc234\n", " Abc234 \r\n", "abc-234"])
def test_a_code_written_in_by_hand_is_read_as_a_typed_one(tmp_path, written):
    path = tmp_path / "table-code"
    path.write_bytes(written.encode("ascii"))
    code = TableCode(path, make=lambda: "XYZ789")
    assert code.value == "ABC234" and code.matches("abc234")
    assert path.read_bytes() == written.encode("ascii")  # kept: the phones keep their code


def test_a_code_still_malformed_once_normalised_is_replaced(tmp_path):
    path = tmp_path / "table-code"
    path.write_text("abc230\n")  # 0 is not in the alphabet, in any case
    code = TableCode(path, make=lambda: "XYZ789")
    assert code.value == "XYZ789" and path.read_text().strip() == "XYZ789"


def test_a_code_that_cannot_be_kept_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(TableCodeError, match="cannot keep the table code in"):
        TableCode(blocker / "table-code")


# -- writes need the code -------------------------------------------------------------------------
WRITES = [
    ("post", "/api/game", {"players": ["Ada", "Ben"]}),
    ("post", "/api/tray/read", None),
    ("post", "/api/calibrate/empty", None),
    ("post", "/api/calibrate/corners", {"corners": None}),
    ("post", "/api/access/new-code", None),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_write_without_the_code_is_refused_with_the_reason(device, method, path, body):
    client, code, table, pressed, _ = device
    before = code.value
    response = getattr(client, method)(path, json=body)
    assert response.status_code == 403
    refusal = response.get_json()
    assert refusal["kind"] == "AccessError" and refusal["join"] is True
    assert "only watching" in refusal["error"] and "table code" in refusal["error"]
    assert pressed == [] and table.current_id() is None and code.value == before


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_the_same_write_with_the_code_goes_through(device, method, path, body):
    client, code, *_ = device
    response = getattr(client, method)(path, json=body, headers=with_code(code))
    assert response.status_code in (200, 201, 202), response.get_json()


def test_game_commands_and_undo_need_the_code(device):
    client, code, table, *_ = device
    game = start(client, code)
    command = {"base": game["seq"], "command": {"type": "setup_drop_read", "tray": SETUP}}
    url = f"/api/game/{game['id']}/command"
    assert client.post(url, json=command).status_code == 403
    assert client.post(url, json=command, headers={"X-Table-Code": "WRONG1"}).status_code == 403
    assert table.snapshot()["seq"] == game["seq"]  # nothing landed
    done = client.post(url, json=command, headers=with_code(code))
    assert done.status_code == 200
    undo = {"base": done.get_json()["seq"], "command": {"type": "undo"}}
    assert client.post(url, json=undo).status_code == 403
    assert client.post(url, json=undo, headers=with_code(code.value.lower())).status_code == 200


def test_watchers_read_everything_without_the_code(device):
    client, code, *_ = device
    game = start(client, code)
    for path in ("/", "/api/game", "/api/games", "/api/tray", "/api/status", "/api/health",
                 f"/api/game/{game['id']}/events.jsonl", "/static/app.js"):
        assert client.get(path).status_code == 200, path
    assert code.value not in client.get("/api/game").get_data(as_text=True)


def test_a_phone_asks_whether_its_code_still_plays(device):
    client, code, *_ = device
    assert client.get("/api/access").get_json() == {"writer": False}
    assert client.get("/api/access", headers={"X-Table-Code": "ABCDEF"}).get_json() == {
        "writer": False
    }
    assert client.get("/api/access", headers=with_code(code)).get_json() == {"writer": True}


def test_a_new_code_kicks_every_phone_with_the_old_one(device):
    client, code, _, _, hub = device
    old = code.value
    game = start(client, old)
    watching = hub.subscribe()
    response = client.post("/api/access/new-code", headers=with_code(old))
    assert response.status_code == 200
    new = response.get_json()["code"]
    assert new != old and new == code.value
    update = watching.get(timeout=1)
    assert update.kind == "access" and old not in str(update.data) and new not in str(update.data)
    command = {"base": game["seq"], "command": {"type": "setup_drop_read", "tray": SETUP}}
    url = f"/api/game/{game['id']}/command"
    refused = client.post(url, json=command, headers=with_code(old))
    assert refused.status_code == 403 and "no longer" in refused.get_json()["error"]
    assert client.post("/api/access/new-code", headers=with_code(old)).status_code == 403
    assert code.value == new  # a kicked phone cannot take the table back
    assert client.post(url, json=command, headers=with_code(new)).status_code == 200


# -- other sites --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost:9999"},  # another program on the same machine
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_write_from_another_site_is_refused_even_with_the_code(device, headers):
    client, code, table, *_ = device
    response = client.post(
        "/api/game", json={"players": ["Ada", "Ben"]}, headers={**with_code(code), **headers}
    )
    assert response.status_code == 403
    assert "another web site" in response.get_json()["error"]
    assert table.current_id() is None


def test_the_devices_own_page_may_write(device):
    client, code, *_ = device
    own = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin", **with_code(code)}
    response = client.post("/api/game", json={"players": ["Ada", "Ben"]}, headers=own)
    assert response.status_code == 201
    on_port = client.post(
        "/api/tray/read",
        headers={"Host": "192.168.1.23:8000", "Origin": "http://192.168.1.23:8000",
                 **with_code(code)},
    )
    assert on_port.status_code == 202


# -- host names ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host",
    ["localhost", "localhost:8000", "127.0.0.1:8000", "192.168.1.23", "[::1]:8000",
     "cubetower", "CubeTower.local:8000", "pi.local.", "table.club.lan"],
)
def test_the_devices_names_and_addresses_are_answered(device, host):
    client, *_ = device
    assert client.get("/api/health", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "cubetower.evil.example",
                                  "club.lan", "localhost.evil.example", ""])
def test_an_unknown_host_name_is_refused_for_reads_and_writes(device, host):
    client, code, table, *_ = device
    read = client.get("/api/game", headers={"Host": host})
    assert read.status_code == 403
    assert "does not answer to the name" in read.get_json()["error"]
    write = client.post(
        "/api/game", json={"players": ["Ada", "Ben"]}, headers={"Host": host, **with_code(code)}
    )
    assert write.status_code == 403 and table.current_id() is None


# -- headers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/", "/api/game", "/static/app.js", "/api/nothing-here"])
def test_every_answer_carries_the_security_headers(device, path):
    client, *_ = device
    response = client.get(path)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_refusals_carry_the_headers_too(device):
    client, *_ = device
    response = client.post("/api/game", json={})
    assert response.status_code == 403
    assert response.headers["X-Frame-Options"] == "DENY"


def test_the_page_has_no_inline_script_or_handler(device):
    import re

    client, *_ = device
    html = client.get("/").get_data(as_text=True)
    for script in re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S):
        assert script.strip() == ""
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"\son[a-z]+\s*=", html)  # onclick=, onload=, ...
    assert not re.search(r"\sstyle\s*=", html)


# -- guessing -----------------------------------------------------------------------------------
def test_guessing_the_code_is_slowed_to_ten_tries_a_minute_per_address(tmp_path):
    from companion.web.access import Throttle

    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    now = [1000.0]
    code = TableCode(tmp_path / "table-code", make=lambda: "K7RM2Q")
    policy = AccessPolicy(code, throttle=Throttle(limit=10, window=60, clock=lambda: now[0]))
    client = create_app(TrayBoard(store, hub), hub, DeviceHooks(read_now=lambda: None),
                        access=policy).test_client()
    guesser = {"REMOTE_ADDR": "192.168.1.66"}
    for guess in range(10):
        response = client.post("/api/tray/read", headers={"X-Table-Code": f"AAAA{guess:02d}"},
                               environ_base=guesser)
        assert response.status_code == 403
    for path, method in (("/api/tray/read", client.post), ("/api/access", client.get)):
        waiting = method(path, headers={"X-Table-Code": "K7RM2Q"}, environ_base=guesser)
        assert waiting.status_code == 429  # even the right code: no oracle while it waits
        assert "too many wrong table codes" in waiting.get_json()["error"]
        assert waiting.headers["Retry-After"] == "60"
    # the phones at the table (other addresses) are not held up
    player = client.post("/api/tray/read", headers={"X-Table-Code": "k7rm2q"},
                         environ_base={"REMOTE_ADDR": "192.168.1.20"})
    assert player.status_code == 202
    now[0] += 60
    again = client.post("/api/tray/read", headers={"X-Table-Code": "K7RM2Q"}, environ_base=guesser)
    assert again.status_code == 202
    store.close()
