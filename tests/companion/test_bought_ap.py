"""Gold paid for AP the player then leaves unused is asked about, not taken without a word."""

import pytest
from table_games import at_adas_black_turn_with_gold

from companion.errors import NeedsConfirmation
from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable


@pytest.fixture
def table(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    yield GameTable(store, Hub())
    store.close()


def at_adas_black_turn(table):
    snap = at_adas_black_turn_with_gold(table)
    state = snap["state"]
    assert state["turn"] == "Ada" and state["offer"]["ap"] == 3
    assert state["options"]["Ada"]["gold_to_buy_ap"] == 2
    return snap


@pytest.mark.parametrize(("ap", "gold", "unused"), [
    (4, 1, 0),  # 3 + 1 bought, all spent
    (5, 2, 0),
    (3, 1, 1),  # the bought AP is not spent
    (4, 2, 1),
    (2, 2, 2),
    (2, 0, 0),  # AP forfeited, but no gold paid for them
])
def test_gold_for_unspent_ap_is_asked_about_and_a_yes_goes_through(table, ap, gold, unused):
    snap = at_adas_black_turn(table)
    command = {"type": "action", "player": "Ada", "choice": "black", "ap": ap}
    if gold:
        command["gold_spent"] = gold
    if unused:
        with pytest.raises(NeedsConfirmation) as asked:
            table.command(snap["id"], snap["seq"], command)
        assert str(asked.value) == (
            f"Ada pays {gold} gold for AP but spends only {ap} of {3 + gold} AP, so {unused} "
            "gold is paid for nothing. Pay anyway?")
        assert table.snapshot()["seq"] == snap["seq"]  # nothing written
        after = table.command(snap["id"], snap["seq"], command, confirmed=True)
    else:
        after = table.command(snap["id"], snap["seq"], command)
    ada = next(p for p in after["state"]["players"] if p["name"] == "Ada")
    assert after["seq"] == snap["seq"] + 1 and ada["gold"] == 2 - gold


def test_all_ap_spent_by_default_is_not_asked_about(table):
    snap = at_adas_black_turn(table)
    command = {"type": "action", "player": "Ada", "choice": "black", "gold_spent": 2}
    after = table.command(snap["id"], snap["seq"], command)
    assert after["state"]["last_action"]["ap_available"] == 5
