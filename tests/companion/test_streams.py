"""Stream slots: bounded, a gone phone's slot reused first, a closed stream ends at once."""

import threading
import time

import pytest

from companion.hub import Hub
from companion.web.streams import StreamSlots


def test_publish_encodes_the_update_once_as_compact_json():
    hub = Hub()
    one, two = hub.subscribe(), hub.subscribe()
    hub.publish("tray", {"counts": {"red": 3}, "total": 3})
    first, second = one.get(0.1), two.get(0.1)
    assert first is second  # one Update, one encoding, shared by every phone
    assert first.text == '{"counts":{"red":3},"total":3}'


def test_a_stream_sends_the_snapshot_then_each_update():
    hub = Hub()
    slots = StreamSlots(hub, 4, check_seconds=0.05)
    stream = slots.stream(slots.open(), "event: snapshot\ndata: {}\n\n")
    assert next(stream).startswith("retry: ")
    assert next(stream) == "event: snapshot\ndata: {}\n\n"
    hub.publish("tray", {"frame_id": "f1"})
    assert next(stream) == 'event: tray\ndata: {"frame_id":"f1"}\n\n'
    stream.close()
    assert slots.count == 0 and hub.subscriber_count == 0


def test_a_full_set_closes_the_oldest_stream_for_a_new_phone():
    hub = Hub()
    slots = StreamSlots(hub, 2, check_seconds=0.05)
    oldest, middle = slots.open(), slots.open()
    newest = slots.open()
    assert slots.count == 2 and slots.evictions == 1
    assert oldest.evicted and oldest.ended and not middle.ended and not newest.ended
    assert hub.subscriber_count == 2
    events = list(slots.stream(oldest, "snapshot\n\n"))  # ends instead of waiting
    assert "make room for another phone" in events[-1]


def test_a_gone_phone_gives_up_its_slot_before_the_oldest_live_one():
    slots = StreamSlots(Hub(), 2)
    left = {"gone": False}
    live = slots.open()
    closed_page = slots.open(lambda: left["gone"])
    left["gone"] = True
    slots.open()
    assert slots.evictions == 0 and not live.ended and closed_page.ended
    assert slots.count == 2


def read_in_background(stream) -> threading.Event:
    """Read the stream to its end on another thread, as a server's worker does."""
    ended = threading.Event()

    def read_to_the_end():
        list(stream)
        ended.set()

    threading.Thread(target=read_to_the_end, daemon=True).start()
    time.sleep(0.1)  # the reader waits for an update now
    return ended


def test_a_waiting_stream_ends_soon_after_its_phone_is_gone():
    slots = StreamSlots(Hub(), 4, check_seconds=0.05)
    left = threading.Event()
    stream = slots.stream(slots.open(left.is_set), "snapshot\n\n")
    ended = read_in_background(stream)
    assert not ended.is_set()
    left.set()
    assert ended.wait(0.5)
    assert slots.count == 0


def test_a_waiting_stream_wakes_when_its_slot_is_taken_not_after_its_check_interval():
    slots = StreamSlots(Hub(), 1, check_seconds=30)
    ended = read_in_background(slots.stream(slots.open(), "snapshot\n\n"))
    slots.open()  # a new phone needs the only slot
    assert ended.wait(2.0)


def test_a_quiet_stream_sends_keep_alives():
    slots = StreamSlots(Hub(), 1, keepalive_seconds=0.1, check_seconds=0.02)
    stream = slots.stream(slots.open(), "snapshot\n\n")
    next(stream), next(stream)
    assert next(stream) == ": keep-alive\n\n"
    stream.close()


def test_closing_a_stream_that_never_started_frees_its_slot():
    """A server closes the body unread when the phone left before the headers went out."""
    slots = StreamSlots(Hub(), 1)
    slots.stream(slots.open(), "snapshot\n\n").close()
    assert slots.count == 0


def test_there_is_at_least_one_slot():
    with pytest.raises(ValueError, match="at least one"):
        StreamSlots(Hub(), 0)
