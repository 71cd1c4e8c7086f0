"""Source registry. A source has a name and either

* generates synthetic samples: ``generate(rng, split, index) -> Sample`` (image + boxes + meta), seeded per
  image by the builder, or
* lists existing labelled files: ``items(split) -> list[StaticItem]`` (linked into the dataset as they are).

Register a new source with ``@register``. ``minetest`` is such a static source: frames Minetest drew with the
Minecraft texture pack and labelled itself in the Minecraft classes (``--minetest-dir``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .assets import ICON_VERSIONS, WORLD_VERSIONS, Assets
from .backgrounds import ALLOWED_REAL_SPLITS, LAVA_THRESHOLD, Frame, lava_fraction, list_real, load_frame
from .gui import WINDOW_SIZES, compose_icons
from .rng import choice
from .world import compose_world

REGISTRY: dict[str, type] = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


@dataclass
class Sample:
    image: np.ndarray  # RGB uint8, any size (the builder resizes to the output size)
    boxes: list  # [(class_id, x1, y1, x2, y2)] pixels of IMAGE
    meta: dict = field(default_factory=dict)  # texture_version, gui_scale, screen, window, background, ...


@dataclass
class StaticItem:
    name: str  # output file name (unique within the split)
    image: str  # absolute path of the existing image
    label: str  # absolute path of its YOLO label file
    meta: dict = field(default_factory=dict)


@dataclass
class Context:
    assets: Assets
    real_root: Path
    backgrounds: dict  # synthetic split -> {"surface": [Frame], "cave": [Frame]}
    options: dict


class Source:
    name = ""
    synthetic = True

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def generate(self, rng: np.random.Generator, split: str, index: int) -> Sample:
        raise NotImplementedError

    def items(self, split: str) -> list[StaticItem]:
        return []


@register
class RealSource(Source):
    """The real frames (train/val only; test/ is held out and never used)."""

    name = "real"
    synthetic = False

    def items(self, split):
        if split not in ALLOWED_REAL_SPLITS:
            return []
        out = []
        for fr in list_real(self.ctx.real_root, split):
            meta = {"screen": "real_" + fr.kind, "background": "", "texture_version": "1.17.1" if fr.kind == "cave" else ""}
            if fr.kind == "cave":
                import cv2

                im = cv2.imread(fr.image, cv2.IMREAD_REDUCED_COLOR_4)
                if im is not None and lava_fraction(cv2.cvtColor(im, cv2.COLOR_BGR2RGB)) > LAVA_THRESHOLD:
                    meta["flags"] = "unlabelled_lava_likely"
            out.append(StaticItem("real_" + fr.name, fr.image, fr.label, meta))
        return out


@register
class MinetestSource(Source):
    """Minetest frames drawn with the Minecraft texture pack and labelled by the game itself in the Minecraft
    classes (scripts/minetest-dataset.sh with GAME_TEXTURE_PACK and LABEL_SET=minecraft). Train split only:
    val stays comparable across releases and the real test split is the measure."""

    name = "minetest"
    synthetic = False

    def items(self, split):
        if split != "train":
            return []
        out = []
        for root in self.ctx.options.get("minetest_dirs", []):
            root = Path(root).resolve()
            check_minetest_classes(root)
            for sub in sorted(p for p in root.iterdir() if (p / "images").is_dir() and (p / "labels").is_dir()):
                for label in sorted((sub / "labels").glob("*.txt")):
                    image = next((sub / "images" / (label.stem + e) for e in (".jpg", ".png")
                                  if (sub / "images" / (label.stem + e)).is_file()), None)
                    if image is None:
                        continue
                    name = f"minetest_{root.name}_{sub.name}_{label.stem}{image.suffix}"
                    out.append(StaticItem(name, str(image), str(label), {"screen": "minetest_render", "background": ""}))
        return out


@register
class ClientSource(Source):
    """Frames of the Minecraft client (tests/mcweb) labelled by the game itself (`vistawise annotate --auto
    minecraft-web -o DIR`): each `--client-dir SPLIT=DIR` lists DIR's images/ and labels/ in that split (train or
    val; the client's held-out test set is kept out of the build and read by `vistawise eval`)."""

    name = "client"
    synthetic = False

    def items(self, split):
        out = []
        for root in self.ctx.options.get("client_dirs", {}).get(split, []):
            root = Path(root).resolve()
            check_classes(root / "data.yaml")
            for label in sorted((root / "labels").glob("*.txt")):
                image = next((root / "images" / (label.stem + e) for e in (".jpg", ".png")
                              if (root / "images" / (label.stem + e)).is_file()), None)
                if image is not None:
                    name = f"client_{root.name}_{label.stem}{image.suffix}"
                    out.append(StaticItem(name, str(image), str(label), {"screen": "client_render", "background": ""}))
        return out


def check_minetest_classes(root: Path) -> None:
    """The frames must be labelled in this dataset's classes (`--label-set minecraft`), ids in the same order."""
    for yaml_path in sorted(root.glob("*/data.yaml")):
        check_classes(yaml_path)


def check_classes(yaml_path: Path) -> None:
    """YAML_PATH (an annotate data.yaml) names this dataset's classes, ids in the same order."""
    from .classes import NAMES

    if not yaml_path.is_file():
        raise SystemExit(f"{yaml_path}: missing (a folder written by vistawise annotate has one)")
    names = {}
    in_names = False
    for line in yaml_path.read_text().splitlines():
        if line.startswith("names:"):
            in_names = True
            continue
        if in_names and line.startswith("  ") and ":" in line:
            k, v = line.strip().split(":", 1)
            names[int(k)] = v.strip()
        elif in_names and line.strip():
            break
    got = [names[i] for i in sorted(names)]
    if got != NAMES:
        raise SystemExit(
            f"{yaml_path}: its classes are not the Minecraft detector's (label with --label-set minecraft); "
            f"got {got[:5]}..."
        )


def _pick_background(ctx: Context, rng, split: str, kinds) -> Frame:
    pool = []
    for k in kinds:
        pool += ctx.backgrounds[split][k]
    return pool[int(rng.integers(0, len(pool)))]


@register
class IconsSource(Source):
    """Inventory icons in the hotbar / inventory / crafting table / furnace screens over a real frame."""

    name = "icons"

    def generate(self, rng, split, index):
        version = choice(rng, ICON_VERSIONS)
        fr = _pick_background(self.ctx, rng, split, ("surface", "cave"))
        bg, bg_boxes = load_frame(fr)
        img, boxes, meta = compose_icons(self.ctx.assets, rng, bg, bg_boxes, version)
        meta["background"] = fr.name
        return Sample(img, boxes, meta)


@register
class WorldSource(Source):
    """Ore / bedrock / lava / water blocks rendered in perspective into real cave and surface frames."""

    name = "world"

    def generate(self, rng, split, index):
        version = choice(rng, WORLD_VERSIONS)
        outdoor = rng.random() < 0.35
        fr = _pick_background(self.ctx, rng, split, ("surface",) if outdoor else ("cave",))
        bg, bg_boxes = load_frame(fr)
        W, H = choice(rng, WINDOW_SIZES)
        f = min(1.0, self.ctx.options.get("max_side", 1280) / max(W, H))
        size = (int(round(W * f)), int(round(H * f)))  # rendered directly at the saved size
        img, boxes, meta = compose_world(self.ctx.assets, rng, bg, bg_boxes, version, outdoor, size,
                                         box_mode=self.ctx.options.get("world_box_mode", "block"))
        meta["window"] = f"{W}x{H}"
        meta["background"] = fr.name
        return Sample(img, boxes, meta)
