"""The detector's 23 classes. Ids are fixed (they match the Rust side and the real dataset's data.yaml)."""

from __future__ import annotations

NAMES: list[str] = [
    "trunk",  # 0
    "log_icon",  # 1
    "plank_icon",  # 2
    "stick_icon",  # 3
    "crafting_table_icon",  # 4
    "wood_pickaxe_icon",  # 5
    "cobblestone_icon",  # 6
    "non_cobblestone_icon",  # 7
    "stone_pickaxe_icon",  # 8
    "coal_ore",  # 9
    "coal_icon",  # 10
    "iron_ore",  # 11
    "iron_ore_icon",  # 12
    "iron_icon",  # 13
    "furnace_icon",  # 14
    "iron_pickaxe_icon",  # 15
    "diamond_ore",  # 16
    "diamond_icon",  # 17
    "diamond_pickaxe_icon",  # 18
    "dirt_icon",  # 19
    "lava",  # 20
    "water",  # 21
    "bedrock",  # 22
]
ID: dict[str, int] = {n: i for i, n in enumerate(NAMES)}

ENV_CLASSES = ["trunk", "coal_ore", "iron_ore", "diamond_ore", "lava", "water", "bedrock"]
ICON_CLASSES = [n for n in NAMES if n.endswith("_icon")]
assert len(NAMES) == 23 and len(ICON_CLASSES) == 16
