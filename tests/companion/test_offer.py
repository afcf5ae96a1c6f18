import pytest

from companion.amerigo.offer import tray_offer


def test_rulebook_phase_example_four_blue_one_black_one_red_two_green():
    offer = tray_offer({"blue": 4, "black": 1, "red": 1, "green": 2})
    assert offer.actions == ("blue", "black", "red", "green")
    assert offer.ap == 4
    assert offer.total == 8
    assert offer.gold == 3  # 8 / 3 rounded up


@pytest.mark.parametrize(("total", "gold"), [(0, 0), (1, 1), (3, 1), (4, 2), (9, 3), (10, 4)])
def test_gold_is_a_third_of_the_cubes_rounded_up(total, gold):
    assert tray_offer({"white": total}).gold == gold


def test_gold_with_the_halving_token():
    assert tray_offer({"red": 5}, gold_divisor=2).gold == 3


def test_empty_tray_offers_nothing():
    offer = tray_offer({})
    assert (offer.actions, offer.ap, offer.gold) == ((), 0, 0)


@pytest.mark.parametrize("bad", [{"purple": 1}, {"red": -1}, {"red": 1.5}])
def test_bad_counts_are_refused(bad):
    with pytest.raises(ValueError):
        tray_offer(bad)
