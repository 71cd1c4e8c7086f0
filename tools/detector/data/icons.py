"""Inventory icons drawn the way the game's GUI draws them.

* Items ("item/generated" models): the 16x16 texture, nearest-neighbour scaled by the GUI scale.
* Blocks ("block/block" GUI display transform: rotation [30, 225, 0], scale 0.625): an isometric cube
  showing the up face, the east face (left on screen) and the north face (right on screen), shaded
  top 1.0 / left 0.8 / right 0.6. Rasterised directly at 16*scale screen pixels with nearest texel lookup,
  so texels stay sharp like in the game.
* Text (stack counts, XP level) with the bitmap font font/ascii.png (8x8 cells, white + shadow).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .assets import Assets

# ----------------------------------------------------------------------------------------------------------
# Class -> texture variants. Each name list holds the candidates across eras (1.13+ name first, then 1.12).

WOODS = [  # (1.13+ name, 1.12 name)
    ("oak", "oak"),
    ("spruce", "spruce"),
    ("birch", "birch"),
    ("jungle", "jungle"),
    ("acacia", "acacia"),
    ("dark_oak", "big_oak"),
]


@dataclass(frozen=True)
class ItemSpec:
    names: tuple[str, ...]  # blocks:/items: prefix allowed
    kind: str = "items"
    stackable: bool = True
    tool: bool = False

    @property
    def key(self) -> str:
        return self.names[0]


@dataclass(frozen=True)
class BlockSpec:
    top: tuple[str, ...]
    left: tuple[str, ...]  # east face
    right: tuple[str, ...]  # north face
    stackable: bool = True

    @property
    def key(self) -> str:
        return self.right[0]


def _cube(*names: str) -> BlockSpec:
    return BlockSpec(tuple(names), tuple(names), tuple(names))


def _item(*names: str, **kw) -> ItemSpec:
    return ItemSpec(tuple(names), **kw)


def _icon_catalog() -> dict[str, list]:
    logs = [BlockSpec((f"{a}_log_top", f"log_{b}_top"), (f"{a}_log", f"log_{b}"), (f"{a}_log", f"log_{b}")) for a, b in WOODS]
    planks = [_cube(f"{a}_planks", f"planks_{b}") for a, b in WOODS]
    return {
        "log_icon": logs,
        "plank_icon": planks,
        "stick_icon": [_item("stick")],
        # crafting_table model: north/west = front, east/south = side, up = top
        "crafting_table_icon": [BlockSpec(("crafting_table_top",), ("crafting_table_side",), ("crafting_table_front",))],
        "wood_pickaxe_icon": [_item("wooden_pickaxe", "wood_pickaxe", stackable=False, tool=True)],
        "cobblestone_icon": [_cube("cobblestone")],
        "non_cobblestone_icon": [
            _cube("stone"),
            _cube("granite", "stone_granite"),
            _cube("diorite", "stone_diorite"),
            _cube("andesite", "stone_andesite"),
        ],
        "stone_pickaxe_icon": [_item("stone_pickaxe", stackable=False, tool=True)],
        "coal_icon": [_item("coal"), _item("charcoal")],
        "iron_ore_icon": [_cube("iron_ore")],
        "iron_icon": [_item("iron_ingot")],
        # orientable model: north = front
        "furnace_icon": [BlockSpec(("furnace_top",), ("furnace_side",), ("furnace_front", "furnace_front_off"))],
        "iron_pickaxe_icon": [_item("iron_pickaxe", stackable=False, tool=True)],
        "diamond_icon": [_item("diamond")],
        "diamond_pickaxe_icon": [_item("diamond_pickaxe", stackable=False, tool=True)],
        "dirt_icon": [_cube("dirt")],
    }


ICON_CATALOG = _icon_catalog()

# Distractors: items and blocks that are NOT in our classes and do not look like them (no logs, planks,
# stone-like blocks, other pickaxes, ores, raw ores or ingot look-alikes). They are drawn but never labelled.
DISTRACTOR_ITEMS = [
    _item("apple"), _item("bread"), _item("wheat"), _item("wheat_seeds", "seeds_wheat"), _item("feather"),
    _item("string"), _item("gunpowder"), _item("bone"), _item("rotten_flesh"), _item("flint"), _item("arrow"),
    _item("bow", "bow_standby", stackable=False, tool=True), _item("bucket", "bucket_empty"),
    _item("water_bucket", "bucket_water", stackable=False), _item("lava_bucket", "bucket_lava", stackable=False),
    _item("wooden_sword", "wood_sword", stackable=False, tool=True), _item("stone_sword", stackable=False, tool=True),
    _item("iron_sword", stackable=False, tool=True), _item("diamond_sword", stackable=False, tool=True),
    _item("wooden_shovel", "wood_shovel", stackable=False, tool=True), _item("stone_shovel", stackable=False, tool=True),
    _item("iron_shovel", stackable=False, tool=True), _item("wooden_axe", "wood_axe", stackable=False, tool=True),
    _item("stone_axe", stackable=False, tool=True), _item("iron_axe", stackable=False, tool=True),
    _item("diamond_axe", stackable=False, tool=True), _item("iron_hoe", stackable=False, tool=True),
    _item("golden_apple", "apple_golden"), _item("egg"), _item("snowball"), _item("clay_ball"), _item("paper"),
    _item("book", "book_normal"), _item("redstone", "redstone_dust"), _item("gold_ingot"), _item("emerald"),
    _item("lapis_lazuli", "dye_powder_blue"), _item("leather"), _item("porkchop", "porkchop_raw"),
    _item("cooked_porkchop", "porkchop_cooked"), _item("beef", "beef_raw"), _item("cooked_beef", "beef_cooked"),
    _item("carrot"), _item("potato"), _item("sugar"), _item("bowl"), _item("shears", stackable=False, tool=True),
    _item("flint_and_steel", stackable=False, tool=True), _item("fishing_rod", "fishing_rod_uncast", stackable=False),
    _item("compass_00", "compass", stackable=False), _item("clock_00", "clock", stackable=False), _item("gold_nugget"),
    _item("iron_nugget"), _item("ender_pearl"), _item("slime_ball", "slimeball"), _item("melon_slice", "melon"),
    _item("cookie"), _item("iron_helmet", stackable=False), _item("iron_chestplate", stackable=False),
    _item("diamond_helmet", stackable=False), _item("oak_door", "door_wood"), _item("saddle", stackable=False),
    _item("name_tag"), _item("glowstone_dust"), _item("blaze_rod"), _item("map", "map_empty"), _item("sugar_cane", "reeds"),
    _item("blocks:torch", "blocks:torch_on"), _item("blocks:ladder"), _item("blocks:oak_sapling", "blocks:sapling_oak"),
    _item("blocks:poppy", "blocks:flower_rose"), _item("blocks:dandelion", "blocks:flower_dandelion"),
    _item("blocks:cobweb", "blocks:web"),
]
DISTRACTOR_BLOCKS = [
    _cube("sand"), _cube("gravel"), _cube("glass"), _cube("bricks", "brick"),
    BlockSpec(("oak_planks", "planks_oak"), ("bookshelf",), ("bookshelf",)),
    BlockSpec(("tnt_top",), ("tnt_side",), ("tnt_side",)),
    BlockSpec(("pumpkin_top",), ("pumpkin_side",), ("pumpkin_side",)),
    BlockSpec(("melon_top",), ("melon_side",), ("melon_side",)),
    BlockSpec(("sandstone_top",), ("sandstone", "sandstone_normal"), ("sandstone", "sandstone_normal")),
    _cube("obsidian"), _cube("white_wool", "wool_colored_white"), _cube("red_wool", "wool_colored_red"),
    _cube("snow_block", "snow"), _cube("gold_block"), _cube("emerald_block"), _cube("netherrack"), _cube("glowstone"),
    _cube("clay"), BlockSpec(("hay_block_top",), ("hay_block_side",), ("hay_block_side",)), _cube("sponge"),
    _cube("lapis_block"), _cube("redstone_block"), _cube("soul_sand"), _cube("terracotta", "hardened_clay"), _cube("ice"),
]


# ----------------------------------------------------------------------------------------------------------
# Rendering


def render_item(tex: np.ndarray, scale: int) -> np.ndarray:
    """Flat item: 16x16 texture (any square size) nearest-scaled to 16*scale."""
    n = 16 * scale
    h, w = tex.shape[:2]
    ys = (np.arange(n) * h // n).astype(np.intp)
    xs = (np.arange(n) * w // n).astype(np.intp)
    return tex[ys[:, None], xs[None, :]].copy()


def _rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=np.float64)


def _rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], dtype=np.float64)


_GUI_ROT = _rot_x(math.radians(30)) @ _rot_y(math.radians(225))
_GUI_SCALE = 0.625 * 16.0  # GUI pixels per block unit
# (origin corner at u=v=0, u edge, v edge) in block coordinates centred at 0
_FACES = {
    "top": ((-0.5, 0.5, -0.5), (1, 0, 0), (0, 0, 1)),
    "left": ((0.5, 0.5, 0.5), (0, 0, -1), (0, -1, 0)),  # east face
    "right": ((0.5, 0.5, -0.5), (-1, 0, 0), (0, -1, 0)),  # north face
}


def _project(v) -> np.ndarray:
    r = _GUI_ROT @ np.asarray(v, dtype=np.float64)
    return np.array([8.0 + _GUI_SCALE * r[0], 8.0 - _GUI_SCALE * r[1]])


@lru_cache(maxsize=16)
def _block_maps(scale: int):
    """Per face: (mask, u, v) over the 16*scale icon grid (u, v in [0, 1))."""
    n = 16 * scale
    py, px = np.mgrid[0:n, 0:n]
    p = np.stack([(px + 0.5) / scale, (py + 0.5) / scale], axis=-1)  # GUI px
    taken = np.zeros((n, n), dtype=bool)
    out = {}
    for name, (o, eu, ev) in _FACES.items():
        o2 = _project(o)
        a = _project(np.add(o, eu)) - o2
        b = _project(np.add(o, ev)) - o2
        m = np.linalg.inv(np.stack([a, b], axis=1))
        d = p - o2
        u = d[..., 0] * m[0, 0] + d[..., 1] * m[0, 1]
        v = d[..., 0] * m[1, 0] + d[..., 1] * m[1, 1]
        eps = 1e-6
        mask = (u >= -eps) & (u < 1 + eps) & (v >= -eps) & (v < 1 + eps) & ~taken
        taken |= mask
        out[name] = (mask, np.clip(u, 0, 1 - 1e-9), np.clip(v, 0, 1 - 1e-9))
    return out


SHADES = {"top": 1.0, "left": 0.8, "right": 0.6}


def render_block(top: np.ndarray, left: np.ndarray, right: np.ndarray, scale: int) -> np.ndarray:
    """Isometric block icon (RGBA uint8, 16*scale square)."""
    n = 16 * scale
    out = np.zeros((n, n, 4), dtype=np.float32)
    for name, tex in (("top", top), ("left", left), ("right", right)):
        mask, u, v = _block_maps(scale)[name]
        h, w = tex.shape[:2]
        iu = (u[mask] * w).astype(np.intp)
        iv = (v[mask] * h).astype(np.intp)
        px = tex[iv, iu].astype(np.float32)
        px[:, :3] *= SHADES[name]
        out[mask] = px
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def render_spec(assets: Assets, version: str, spec, scale: int) -> np.ndarray | None:
    if isinstance(spec, ItemSpec):
        t = assets.texture(version, spec.kind, spec.names)
        return None if t is None else render_item(t, scale)
    top = assets.texture(version, "blocks", spec.top)
    left = assets.texture(version, "blocks", spec.left)
    right = assets.texture(version, "blocks", spec.right)
    if top is None or left is None or right is None:
        return None
    return render_block(top, left, right, scale)


def available_specs(assets: Assets, version: str, specs) -> list:
    out = []
    for s in specs:
        if isinstance(s, ItemSpec):
            ok = assets.has(version, s.kind, s.names)
        else:
            ok = all(assets.has(version, "blocks", n) for n in (s.top, s.left, s.right))
        if ok:
            out.append(s)
    return out


# ----------------------------------------------------------------------------------------------------------
# Bitmap font


class Font:
    """font/ascii.png: 16x16 grid of 8x8 glyphs; advance = glyph width + 1 (space = 4)."""

    def __init__(self, sheet: np.ndarray):
        self.sheet = sheet
        self.cell = sheet.shape[0] // 16

    @lru_cache(maxsize=256)
    def glyph(self, ch: str):
        c = ord(ch)
        k = self.cell
        g = self.sheet[(c // 16) * k : (c // 16 + 1) * k, (c % 16) * k : (c % 16 + 1) * k, 3] > 0
        if ch == " ":
            return g, 4
        cols = np.where(g.any(axis=0))[0]
        width = int(cols.max()) + 1 if len(cols) else 0
        # the game's ascii font is 8 px per cell; scale the advance if a pack uses bigger cells
        return g, int(math.ceil(width * 8 / k)) + 1

    def width(self, text: str) -> int:
        return sum(self.glyph(ch)[1] for ch in text)

    def mask(self, text: str) -> np.ndarray:
        """Text coverage at GUI resolution (8 rows high), bool (8, width)."""
        k = self.cell
        w = self.width(text)
        m = np.zeros((8, max(w, 1)), dtype=bool)
        x = 0
        for ch in text:
            g, adv = self.glyph(ch)
            if k != 8:  # downsample big-cell packs to 8x8
                idx = (np.arange(8) * k // 8).astype(np.intp)
                g = g[idx][:, idx]
            gw = min(8, m.shape[1] - x)
            m[:, x : x + gw] |= g[:, :gw]
            x += adv
        return m


def durability_color(frac: float) -> tuple[int, int, int]:
    """Durability bar colour (hue from red 0 to green 1/3 of the HSV circle)."""
    h = max(0.0, min(1.0, frac)) / 3.0
    i = int(h * 6)
    f = h * 6 - i
    q, t = 1 - f, f
    r, g, b = [(1, t, 0), (q, 1, 0), (0, 1, t), (0, q, 1), (t, 0, 1), (1, 0, q)][i % 6]
    return int(r * 255), int(g * 255), int(b * 255)
