"""Fixtures of the companion's tests."""

import pytest
from table_access import playing, policy

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.tray import TrayBoard
from companion.web.app import create_app


@pytest.fixture
def table(tmp_path):
    """(the table, a playing phone's test client, the hub) of a fresh device with no camera."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    table = GameTable(store, hub)
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, table=table, access=access)
    yield table, playing(app.test_client(), access), hub
    store.close()
