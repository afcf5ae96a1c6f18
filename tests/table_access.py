"""Test clients that play at the table: they send the table code, as the page does after joining."""

from __future__ import annotations

from pathlib import Path

from companion.table_code import TableCode
from companion.web.access import AccessPolicy


def policy(folder: Path) -> AccessPolicy:
    """A fresh table code kept in ``folder``; the default names (addresses, localhost, *.local)."""
    return AccessPolicy(TableCode(folder / "table-code"))


def playing(client, code: str | TableCode | AccessPolicy):
    """``client`` (Flask's test client) sending ``code`` with every request."""
    if isinstance(code, AccessPolicy):
        code = code.code
    if isinstance(code, TableCode):
        code = code.value
    client.environ_base["HTTP_X_TABLE_CODE"] = code
    return client
