"""Write the two example games shipped in ``companion/amerigo/examples/`` (run by hand).

    .venv/bin/python tests/rules/make_example_games.py

A seeded bot plays plausible, legal moves through the real ``Game`` facade, so the files contain
only events the engine accepted: tray reads drawn from the cubes inside the tower, posts, builds
that complete islands, production, progress tokens, pirates, a bump, an undo/redo, a corrected
reading, a chest and a once-only gold token. The numbers a player would read off the board (tile
VP, pirate markers, the track VP at the end) are the bot's choices, not the real printed values.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from companion.amerigo.errors import RulesError  # noqa: E402
from companion.amerigo.game import Game  # noqa: E402
from companion.amerigo.offer import COLOURS  # noqa: E402

OUT = ROOT / "companion" / "amerigo" / "examples"
TOKENS = ["ap2:black", "ap1:red+green", "ships8", "pirates_plus2", "pirates_half", "pirates_gold",
          "plan_two", "swap_green_red", "gold3", "gold5", "gold_per_post", "gold_half",
          "vp_instead", "vp_posts", "vp7", "vp_gold", "ap2:green", "ap1:blue+yellow"]


class Bot:
    def __init__(self, seed: int, players: list[str], islands: dict[str, tuple[bool, int]]):
        self.rng = random.Random(seed)
        self.g = Game()
        self.players = players
        self.islands = islands  # name -> (big, tiles needed to complete)
        self.built = dict.fromkeys(islands, 0)
        self.tokens = list(TOKENS)
        self.rng.shuffle(self.tokens)

    def cmd(self, c: dict) -> dict:
        return self.g.command({"v": 1, **c})

    def fall(self) -> dict[str, int]:
        """Each cube inside the tower falls out with probability 0.55 (a toy tower)."""
        inside = self.g.state_dict()["vision_bounds"]
        return {c: sum(self.rng.random() < 0.55 for _ in range(inside[c])) for c in COLOURS}

    def try_actions(self, name: str) -> None:
        st = self.g.state_dict()
        opts = st["options"][name]
        avail = {a["colour"]: a for a in opts["actions"]}
        me = next(p for p in st["players"] if p["name"] == name)
        candidates = []
        for colour, a in avail.items():
            ap = a["ap"]
            if colour == "blue" and me["trading_posts_total"] < 12:
                isl = self.rng.sample(sorted(self.islands), 2)
                open_isl = [i for i in isl if not st["islands"].get(i, {}).get("completed")]
                posts = [{"island": i, "big": self.islands[i][0]} for i in open_isl[:1 + (ap > 4)]]
                candidates.append({"choice": "blue", "posts": posts})
            elif colour == "black" and me["cannons"] < 12:
                candidates.append({"choice": "black"})
            elif colour == "red":
                take = []
                budget = ap
                if budget >= 3:
                    size = self.rng.randint(1, min(3, budget))
                    take.append({"tile": "landscape", "size": size})
                    budget -= size
                take += [{"tile": "village"}] * min(budget, me["villages_left"], 3)
                if take:
                    candidates.append({"choice": "red", "take": take})
            elif colour == "brown":
                tok = [self.tokens.pop()] if ap >= 3 and self.tokens else []
                candidates.append({"choice": "brown", "tokens_taken": tok})
            elif colour == "green":
                mine = [i for i, n in me["trading_posts"].items()
                        if not st["islands"][i]["completed"]]
                sup = me["supply"]
                if mine and (sup["villages"] or sup["landscapes"]):
                    candidates.append(self.build(mine[0], sup, ap))
            elif colour == "yellow" and ap >= 2:
                goods = ["cotton", "tobacco", "sugar", "coconut", "coffee"]
                buy = [{"good": self.rng.choice(goods), "cost": 2}] * (ap // 2)
                candidates.append({"choice": "yellow", "production": buy[:2]})
            elif colour == "white":
                candidates.append({"choice": "white", "advance": self.rng.randint(1, ap)})
        candidates.append({"choice": "gold"})
        self.rng.shuffle(candidates)
        for c in candidates:
            try:
                self.cmd({"type": "action", "player": name, **c})
            except RulesError:
                continue
            if c["choice"] == "green" and "completes" not in c:
                pass
            return
        raise AssertionError(f"bot found no legal action for {name}")

    def build(self, island: str, sup: dict, ap: int) -> dict:
        tiles, cost = [], 0
        for _ in range(sup["villages"]):
            if cost + 1 <= ap:
                tiles.append({"island": island, "tile": "village",
                              "vp": self.rng.randint(1, 3) + (2 if self.islands[island][0] else 0)})
                cost += 1
        for size in sup["landscapes"]:
            if cost + size <= ap:
                tiles.append({"island": island, "tile": "landscape", "size": size,
                              "vp": size + (2 if self.islands[island][0] else 0)})
                cost += size
        c: dict = {"choice": "green", "build": tiles}
        if tiles and self.rng.random() < 0.5:
            c["commodities"] = {self.rng.choice(["cotton", "sugar", "coffee", "coconut"]): 1}
        self.built[island] += len(tiles)
        if self.built[island] >= self.islands[island][1]:
            c["completes"] = island
        return c

    def play(self, name: str) -> None:
        rng = self.rng
        self.cmd({"type": "game_created", "name": name})
        self.cmd({"type": "players_seated", "players": self.players})
        self.cmd({"type": "setup_drop_read", "tray": self.fall()})
        pirates = rng.sample([0, 1, 2, 3, 4, 5], 5)  # the markers' printed values: the bot's guess
        self.cmd({"type": "pirate_revealed", "value": pirates.pop()})
        corrected = bumped = undone = False
        while True:
            st = self.g.state_dict()
            stage = st["stage"]
            if stage == "tray":
                tray = self.fall()
                ev = self.cmd({"type": "tray_read", "tray": tray})
                if not corrected and st["round"] == 2 and sum(tray.values()) > 2:
                    # the camera missed a cube; the table corrects the reading
                    n = len(self.g.events)
                    fixed = dict(ev["tray"])
                    c = next(c for c in COLOURS if self.g.state_dict()["vision_bounds"][c] > 0)
                    fixed[c] += 1
                    self.cmd({"type": "tray_corrected", "target": n, "tray": fixed})
                    corrected = True
            elif stage == "actions":
                if not bumped and st["round"] == 3 and st["cubes"]["inside_tower_total"] > 3:
                    inside = st["vision_bounds"]
                    c = next(c for c in COLOURS if inside[c] > 0)
                    self.cmd({"type": "bump_read", "tray": {c: 1}})
                    bumped = True
                self.try_actions(st["turn"])
                if not undone and st["round"] == 1 and rng.random() < 0.2:
                    self.cmd({"type": "undo"})
                    self.cmd({"type": "undo", "redo": True})
                    undone = True
            elif stage == "round_end":
                self.cmd({"type": "round_ended"})
            elif stage == "pirate":
                self.cmd({"type": "pirate_revealed", "value": pirates.pop()})
            elif stage == "final":
                for p in st["players"]:
                    if p["treasure_chests"]:
                        self.cmd({"type": "chest_cashed", "player": p["name"]})
                    if any(t["name"] == "gold3" and not t["used"] for t in p["progress_tokens"]):
                        self.cmd({"type": "token_used", "player": p["name"], "token": "gold3"})
                self.cmd({"type": "final_scoring", "players": {
                    p["name"]: {"progress_vp": min(15, p["progress"] // 2),
                                "special_vp": min(10, p["special_track"] // 2)}
                    for p in st["players"]}})
                return


def write(path: Path, game: Game) -> None:
    path.write_text("".join(json.dumps(e, separators=(", ", ": ")) + "\n" for e in game.events))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    islands4 = {"A": (True, 5), "B": (False, 2), "C": (False, 3), "D": (True, 6), "E": (False, 2),
                "F": (True, 4), "G": (False, 3)}
    bot = Bot(2013, ["Ada", "Ben", "Cleo", "Dan"], islands4)
    bot.play("example: 4 players")
    write(OUT / "game-4p.jsonl", bot.g)
    islands2 = {"A": (True, 4), "B": (False, 2), "C": (False, 3), "D": (False, 2)}
    bot = Bot(1502, ["Eva", "Finn"], islands2)
    bot.play("example: 2 players")
    write(OUT / "game-2p.jsonl", bot.g)
    for name in ("game-4p.jsonl", "game-2p.jsonl"):
        print(name, len((OUT / name).read_text().splitlines()), "events")


if __name__ == "__main__":
    main()
