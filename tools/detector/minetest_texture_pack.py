#!/usr/bin/env python3
"""Build a Minetest texture pack from Minecraft's own textures (npm `minecraft-assets`, never committed).

With the pack, Minetest (minetest_game) draws Minecraft-looking trunks, ores, dirt, grass, water, lava and
inventory icons, and `vistawise annotate --auto minetest --label-set minecraft` labels them with the
Minecraft detector's classes: exactly labelled frames of real 3D scenes (perspective, lighting, occlusion)
for the classes the real frames cover thinly (trunk) or not at all (coal / iron ore in walls, icons in a hotbar).

Usage (from the repository root; any venv with numpy and pillow, e.g. the data builder's):
    python tools/detector/minetest_texture_pack.py --out .work/minetest/mc-pack-1.19.1 --version 1.19.1
    GAME_TEXTURE_PACK=.work/minetest/mc-pack-1.19.1 bash tests/minetest/gameenv.sh start 2024

The pack is a folder of PNG files named as minetest_game names its textures; Minetest reads it through the
`texture_path` setting (gameenv.sh sets it from GAME_TEXTURE_PACK). What cannot be copied as it is:
  * ores: Minetest draws an ore as stone with a transparent "mineral" overlay; the overlay is the pixels
    where Minecraft's ore texture differs from its stone texture;
  * grass tops, leaves, (1.13+) water: Minecraft stores them grey and tints them by biome; the pack tints
    them with the plains colours;
  * the "simple" leaves (gameenv.sh sets leaves_style = simple) are opaque: holes are filled with a dark
    shade of the leaf colour.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data.assets import Assets, ensure_assets  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# Biome tints (plains) for the textures Minecraft stores grey.
GRASS = (0x91, 0xBD, 0x59)
FOLIAGE = (0x48, 0xB5, 0x18)
SPRUCE = (0x61, 0x99, 0x61)
BIRCH = (0x80, 0xA7, 0x55)
WATER = (0x3F, 0x76, 0xE4)

# Minetest texture -> Minecraft texture names (1.13+ first, then the 1.12 names), "items:" for items/.
# A tint applies only when the Minecraft texture is grey (older versions pre-tint some).
COPY: dict[str, tuple[list[str], tuple[int, int, int] | None]] = {
    "default_tree.png": (["oak_log", "log_oak"], None),
    "default_tree_top.png": (["oak_log_top", "log_oak_top"], None),
    "default_jungletree.png": (["jungle_log", "log_jungle"], None),
    "default_jungletree_top.png": (["jungle_log_top", "log_jungle_top"], None),
    "default_pine_tree.png": (["spruce_log", "log_spruce"], None),
    "default_pine_tree_top.png": (["spruce_log_top", "log_spruce_top"], None),
    "default_aspen_tree.png": (["birch_log", "log_birch"], None),
    "default_aspen_tree_top.png": (["birch_log_top", "log_birch_top"], None),
    "default_acacia_tree.png": (["acacia_log", "log_acacia"], None),
    "default_acacia_tree_top.png": (["acacia_log_top", "log_acacia_top"], None),
    "default_wood.png": (["oak_planks", "planks_oak"], None),
    "default_junglewood.png": (["jungle_planks", "planks_jungle"], None),
    "default_pine_wood.png": (["spruce_planks", "planks_spruce"], None),
    "default_aspen_wood.png": (["birch_planks", "planks_birch"], None),
    "default_acacia_wood.png": (["acacia_planks", "planks_acacia"], None),
    "default_leaves.png": (["oak_leaves", "leaves_oak"], FOLIAGE),
    "default_jungleleaves.png": (["jungle_leaves", "leaves_jungle"], FOLIAGE),
    "default_pine_needles.png": (["spruce_leaves", "leaves_spruce"], SPRUCE),
    "default_aspen_leaves.png": (["birch_leaves", "leaves_birch"], BIRCH),
    "default_acacia_leaves.png": (["acacia_leaves", "leaves_acacia"], FOLIAGE),
    "default_stone.png": (["stone"], None),
    "default_cobble.png": (["cobblestone"], None),
    "default_dirt.png": (["dirt"], None),
    "default_grass.png": (["grass_block_top", "grass_top"], GRASS),
    "default_grass_side.png": (["grass_block_side", "grass_side"], None),
    # Minetest's five heights of grass plant; Minecraft has one.
    **{f"default_grass_{i}.png": (["grass", "tallgrass"], GRASS) for i in range(1, 6)},
    "default_sand.png": (["sand"], None),
    "default_gravel.png": (["gravel"], None),
    "default_water.png": (["water_still"], WATER),
    "default_water_source_animated.png": (["water_still"], WATER),
    "default_water_flowing_animated.png": (["water_flow"], WATER),
    "default_lava.png": (["lava_still"], None),
    "default_lava_source_animated.png": (["lava_still"], None),
    "default_lava_flowing_animated.png": (["lava_flow"], None),
    "default_furnace_front.png": (["furnace_front", "furnace_front_off"], None),
    "default_furnace_front_active.png": (["furnace_front_on"], None),
    "default_furnace_side.png": (["furnace_side"], None),
    "default_furnace_top.png": (["furnace_top"], None),
    "default_furnace_bottom.png": (["furnace_top"], None),
    "default_stick.png": (["items:stick"], None),
    "default_coal_lump.png": (["items:coal"], None),
    "default_steel_ingot.png": (["items:iron_ingot"], None),
    "default_diamond.png": (["items:diamond"], None),
    "default_tool_woodpick.png": (["items:wooden_pickaxe", "items:wood_pickaxe"], None),
    "default_tool_stonepick.png": (["items:stone_pickaxe"], None),
    "default_tool_steelpick.png": (["items:iron_pickaxe"], None),
    "default_tool_diamondpick.png": (["items:diamond_pickaxe"], None),
    "default_tool_woodaxe.png": (["items:wooden_axe", "items:wood_axe"], None),
    "default_tool_stoneaxe.png": (["items:stone_axe"], None),
    "default_tool_woodshovel.png": (["items:wooden_shovel", "items:wood_shovel"], None),
    "default_tool_stoneshovel.png": (["items:stone_shovel"], None),
    "default_tool_woodsword.png": (["items:wooden_sword", "items:wood_sword"], None),
    "default_tool_stonesword.png": (["items:stone_sword"], None),
    "farming_tool_woodhoe.png": (["items:wooden_hoe", "items:wood_hoe"], None),
    "farming_tool_stonehoe.png": (["items:stone_hoe"], None),
    "default_apple.png": (["items:apple"], None),
}

# Minetest "simple" leaves (opaque) from the same textures.
SIMPLE_LEAVES = {
    "default_leaves_simple.png": "default_leaves.png",
    "default_jungleleaves_simple.png": "default_jungleleaves.png",
    "default_acacia_leaves_simple.png": "default_acacia_leaves.png",
}

# Minetest ore overlays: (Minecraft ore texture names, Minecraft stone).
ORES = {
    "default_mineral_coal.png": ["coal_ore"],
    "default_mineral_iron.png": ["iron_ore"],
    "default_mineral_diamond.png": ["diamond_ore"],
}


def is_grey(a: np.ndarray) -> bool:
    rgb = a[..., :3].astype(np.int16)
    seen = a[..., 3] > 0
    if not seen.any():
        return False
    return float((rgb.max(-1) - rgb.min(-1))[seen].mean()) < 5.0


def tinted(a: np.ndarray, tint) -> np.ndarray:
    if tint is None or not is_grey(a):
        return a
    out = a.copy()
    out[..., :3] = (a[..., :3].astype(np.float32) * np.array(tint, np.float32) / 255.0).round().astype(np.uint8)
    return out


def lookup(assets: Assets, version: str, names: list[str]) -> np.ndarray | None:
    """The whole texture (animation strips kept: Minetest animates vertical frames the same way)."""
    for n in names:
        kind, name = n.split(":", 1) if ":" in n else ("blocks", n)
        a = assets.image(version, f"{kind}/{name}.png")
        if a is not None:
            return a
    return None


def ore_overlay(ore: np.ndarray, stone: np.ndarray) -> np.ndarray:
    """The ore's own pixels (where it differs from stone), the rest transparent."""
    ore = ore[: ore.shape[1]]
    stone = stone[: stone.shape[1]]
    if ore.shape != stone.shape:
        stone = np.array(Image.fromarray(stone).resize(ore.shape[1::-1], Image.NEAREST))
    diff = np.abs(ore[..., :3].astype(np.int16) - stone[..., :3].astype(np.int16)).sum(-1)
    out = ore.copy()
    out[..., 3] = np.where(diff > 30, 255, 0).astype(np.uint8)
    return out


def opaque(a: np.ndarray, tint) -> np.ndarray:
    """Holes filled with a dark shade of the tint (simple leaves are drawn opaque)."""
    fill = np.array([c * 0.35 for c in (tint or FOLIAGE)], np.float32)
    alpha = a[..., 3:4].astype(np.float32) / 255.0
    rgb = a[..., :3].astype(np.float32) * alpha + fill * (1.0 - alpha)
    out = np.empty_like(a)
    out[..., :3] = rgb.round().astype(np.uint8)
    out[..., 3] = 255
    return out


def build(out: Path, version: str, workdir: Path) -> dict:
    assets = Assets(ensure_assets(workdir))
    if not (assets.data / version / "blocks").is_dir():
        known = sorted(p.name for p in assets.data.iterdir() if (p / "blocks").is_dir())
        raise SystemExit(f"minecraft-assets has no version {version!r} (known: {', '.join(known)})")
    out.mkdir(parents=True, exist_ok=True)
    written, missing = {}, []
    made: dict[str, np.ndarray] = {}
    for mt_name, (names, tint) in COPY.items():
        a = lookup(assets, version, names)
        if a is None:
            missing.append(mt_name)
            continue
        made[mt_name] = tinted(a, tint)
    for mt_name, src in SIMPLE_LEAVES.items():
        if src in made:
            made[mt_name] = opaque(made[src][: made[src].shape[1]], COPY[src][1])
    stone = lookup(assets, version, ["stone"])
    for mt_name, names in ORES.items():
        ore = lookup(assets, version, names)
        if ore is None or stone is None:
            missing.append(mt_name)
            continue
        made[mt_name] = ore_overlay(ore, stone)
    for mt_name, a in made.items():
        tmp = out / f".{mt_name}.tmp"
        Image.fromarray(a, "RGBA").save(tmp, format="PNG")
        tmp.replace(out / mt_name)
        written[mt_name] = list(a.shape[:2])
    record = {
        "minecraft_version": version,
        "source": "npm minecraft-assets (textures are Mojang's; never commit this folder)",
        "textures": written,
        "missing": missing,
    }
    (out / "pack.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="the pack folder to write (e.g. .work/minetest/mc-pack)")
    ap.add_argument(
        "--version",
        default="1.19.1",
        help="Minecraft texture version from minecraft-assets (1.12 or 1.13.2 for the old art); default %(default)s",
    )
    ap.add_argument("--workdir", type=Path, default=REPO / ".work", help="where npm installs minecraft-assets")
    args = ap.parse_args(argv)
    record = build(args.out, args.version, args.workdir)
    print(
        f"{args.out}: {len(record['textures'])} textures from Minecraft {args.version}"
        + (f"; not in this version: {', '.join(record['missing'])}" if record["missing"] else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
