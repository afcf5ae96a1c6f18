"""Every number the rulebook prints, each with the sentence it comes from.

Quotes are from ``amerigo-dice-tower-rules-en.txt`` (Queen Games 2013, English). Numbers that are
printed only on the boards (time markers, pirate values, track VP spaces) are *not* here: they are
settings (``settings.py``) or values the players enter.
"""

from __future__ import annotations

from .offer import COLOURS

# "49 cubes – 7 each in blue, black, red, brown, green, yellow and white"
CUBES_PER_COLOUR = 7
TOTAL_CUBES = CUBES_PER_COLOUR * len(COLOURS)  # 49

# "For the first phase ... drops all blue cubes ... (For the second phase, the black cubes; for the
# third phase, the red cubes; etc.) After the phase in which the white cubes are dropped ..."
PHASE_COLOURS: tuple[str, ...] = COLOURS  # blue, black, red, brown, green, yellow, white

# "The game is played over 5 game rounds; each game round consists of 7 phases."
ROUNDS = 5
PHASES_PER_ROUND = 7

# "Island set-up for 2 players" / "... for 3 players" / "... for 4 players": 2 to 4 players.
MIN_PLAYERS, MAX_PLAYERS = 2, 4

# "If his total gold would exceed 12, he immediately scores 1 victory point for each excess gold."
GOLD_MAX = 12
# "moves his cannon disc ... one space to the right for each action point, up to a maximum of 12."
CANNON_MAX = 12
# "Each player ... takes the 12 trading posts"
TRADING_POSTS = 12
# "2 ships" -- "Each action point allows the player to move each of his ships"; a post may be
# established when "a ship ends its movement on an anchor space": at most one per ship per action.
SHIPS = 2
# "16 village tiles" (each player)
VILLAGE_TILES = 16
# "37 neutral landscape tiles" (common)
LANDSCAPE_TILES = 37
# "Taking a neutral landscape tile costs 1-6 AP, depending on its size."
LANDSCAPE_SIZES = range(1, 7)
# "Taking one of his own village tiles, regardless of its size, costs 1 AP." / "Placing a village
# tile costs only 1 AP."
VILLAGE_COST = 1
# "A player can take only one neutral landscape tile during each game phase." (two with the token)
LANDSCAPES_PER_PLAN = 1
LANDSCAPES_PER_PLAN_WITH_TOKEN = 2

# "The first player to establish a trading post on an island scores 3 victory points"
DISCOVERY_VP = 3
# "he scores 3 victory points for completing the island"
COMPLETION_VP = 3
# "1 : 1x  2 : 3x  3 : 6x  4 : 10x  5 : 15x  6 : 21x" (trading posts on the completed island)
POST_MULTIPLIER = {1: 1, 2: 3, 3: 6, 4: 10, 5: 15, 6: 21}
# "He can remove this treasure chest from the game at any time and take 3 gold."
CHEST_GOLD = 3
# "5 treasure chests – for big islands"
CHESTS = 5

# "totals the number of cubes in the action space, divides this number by three, rounds up"
GOLD_DIVISOR = 3
# "he receives 1 gold for each 2 cubes in the action space (rounded up) instead of 1 gold for
# each 3 cubes"
GOLD_DIVISOR_WITH_TOKEN = 2
# "he receives 2 gold, no matter how many action points he forfeits." (end of a track)
TRACK_END_GOLD = 2
# "All other players receive one gold for each other player preceding them in player order."
STARTING_GOLD_PER_PRECEDING_PLAYER = 1

# "40 commodity tokens – 8 of each type"
COMMODITIES_PER_GOOD = 8
# "50 production tokens – 3x 2, 4x 3, 3x 4 of each type"
PRODUCTION_TOKENS_PER_GOOD = {2: 3, 3: 4, 4: 3}
# "Modifications for 2 and 3 players: With 2 players, return the production tokens for 3 and 4
# players to the game box; with 3 players, return only those for 4 players" -- "2 player: 30
# production tokens", "3 player: 40 production tokens"; with 4 players none go back: all 50.
# Which goods and costs are marked for 3 and 4 players is printed on the tokens only, so fewer
# players are held to the pool's size and to the full set's count per good and cost.
PRODUCTION_TOKENS_FOR_PLAYERS = {2: 30, 3: 40, 4: 50}
# "The AP cost of a production token equals the number on this token." / "for 2-4 AP"
PRODUCTION_COSTS = (2, 3, 4)
# "Note: Each player starts with a production token of each type of good printed on his sheet."
STARTING_PRODUCTION = 1

# "24 progress tokens"
PROGRESS_TOKENS = 24
# "6 pirate markers" ... "place 5 of them face down on the pirate spaces" ... "Reveal one"
PIRATE_MARKERS = 6
PIRATE_SPACES = 5
# "The pirates' strength increases by 2 for all other players."
PIRATE_TOKEN_EXTRA = 2
# "he receives 2 gold. Note: Even if the pirates' strength is 0"
PIRATE_TOKEN_GOLD = 2
# "Each token depicts one action. ... he receives 2 additional action points"
TOKEN_AP_ONE_ACTION = 2
# "Each token depicts two actions. ... he receives 1 additional action point"
TOKEN_AP_TWO_ACTIONS = 1
# "he may use this token to gain 8 additional action points for each ship for this phase."
TOKEN_AP_SHIPS = 8
# "Once only, the token's owner receives 3 gold." / "... 5 gold."
TOKEN_GOLD_ONCE = {"gold3": 3, "gold5": 5}
# "During final scoring, the token's owner scores 7 victory points."
TOKEN_VP_FLAT = 7
