"""Island names are checked as the players' names are: no invisible characters, and no second
spelling (capitals, a joiner) of an island the game already names."""

import pytest
from table_games import SETUP_DROP

from companion.table import TableError


def at_first_blue_action(table):
    snap = table.new_game(["Ada", "Ben"], "Test")
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 2},
                    {"type": "tray_read", "tray": {"blue": 4}}):
        snap = table.command(snap["id"], snap["seq"], command)
    return snap


def blue(snap, *islands):
    return {"type": "action", "player": snap["state"]["turn"], "choice": "blue",
            "posts": [{"island": name, "big": False} for name in islands]}


@pytest.mark.parametrize(
    ("first", "then", "words"),
    [
        (["A"], ["a"], "differ only"),
        (["Nord"], ["NORD"], "differ only"),
        (["AB"], ["A\u200dB"], "differ only"),  # a joiner between two letters: the same name
        (["A"], ["Ａ"], "differ only"),  # full-width
        (["A"], ["A\u200b"], "control or invisible character"),
        (["A"], ["\u200bA"], "control or invisible character"),
        ([], ["B", "b"], "differ only"),  # two spellings in one command
        ([], ["\u0301"], "only accents or marks"),
    ],
)
def test_an_island_name_is_checked_like_a_players(table, first, then, words):
    table_, *_ = table
    snap = at_first_blue_action(table_)
    if first:
        snap = table_.command(snap["id"], snap["seq"], blue(snap, *first))
    with pytest.raises(TableError) as refused:
        table_.command(snap["id"], snap["seq"], blue(snap, *then))
    assert words in str(refused.value)
    assert table_.snapshot()["seq"] == snap["seq"]


def test_an_island_named_again_as_it_was_written_is_the_same_island(table):
    table_, *_ = table
    snap = at_first_blue_action(table_)
    snap = table_.command(snap["id"], snap["seq"], blue(snap, "\U0001f3f4\u200d\u2620"))
    snap = table_.command(snap["id"], snap["seq"], blue(snap, "\U0001f3f4\u200d\u2620"))
    assert list(snap["state"]["islands"]) == ["\U0001f3f4\u200d\u2620"]
    assert snap["state"]["islands"]["\U0001f3f4\u200d\u2620"]["posts"] == {"Ada": 1, "Ben": 1}
