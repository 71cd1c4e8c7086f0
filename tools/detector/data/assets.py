"""Minecraft textures from the npm package `minecraft-assets` (never committed: installed into the work folder).

`ensure_assets(workdir)` installs the package with npm when it is missing and returns its data folder,
which holds one folder per game version (blocks/, items/, gui/, font/, ...).
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

NPM_PACKAGE = "minecraft-assets@1.19.0"

# Versions used by the synthetic sources. Texture eras: <=1.13 (old art), 1.14-1.16 (Texture Update),
# 1.17+ (new ores, deepslate).
ICON_VERSIONS = ["1.11.2", "1.12", "1.13.2", "1.14.4", "1.16.4", "1.17.1", "1.18.1", "1.19.1", "1.20.2", "1.21.1"]
WORLD_VERSIONS = ["1.11.2", "1.12", "1.13.2", "1.14.4", "1.16.4", "1.17.1", "1.20.2"]


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def data_dir_for(workdir: Path) -> Path:
    return Path(workdir) / "npm" / "node_modules" / "minecraft-assets" / "minecraft-assets" / "data"


def ensure_assets(workdir: Path, log=print) -> Path:
    """Return the minecraft-assets data folder, installing the npm package into WORKDIR/npm if needed."""
    data = data_dir_for(workdir)
    if (data / "1.12" / "blocks").is_dir():
        return data
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the textures (minecraft-assets); install Node.js/npm first")
    prefix = Path(workdir) / "npm"
    prefix.mkdir(parents=True, exist_ok=True)
    log(f"installing {NPM_PACKAGE} into {prefix} (textures are not part of the repository)")
    subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", NPM_PACKAGE], check=True)
    if not (data / "1.12" / "blocks").is_dir():
        raise SystemExit(f"npm install finished but {data} has no textures")
    return data


class Assets:
    """Texture lookup with caching. Arrays are RGBA uint8 (H, W, 4)."""

    def __init__(self, data_dir: Path):
        self.data = Path(data_dir)

    @lru_cache(maxsize=4096)
    def image(self, version: str, rel: str) -> np.ndarray | None:
        p = self.data / version / rel
        if not p.is_file():
            return None
        with Image.open(p) as im:
            return np.ascontiguousarray(np.array(im.convert("RGBA"), dtype=np.uint8))

    def texture(self, version: str, kind: str, names) -> np.ndarray | None:
        """First existing blocks/ or items/ texture among NAMES (str or list), first animation frame only."""
        if isinstance(names, str):
            names = [names]
        for n in names:
            if ":" in n:  # "blocks:torch" overrides the kind
                k, n = n.split(":", 1)
            else:
                k = kind
            a = self.image(version, f"{k}/{n}.png")
            if a is not None:
                w = a.shape[1]
                return a[:w] if a.shape[0] > w else a  # animated strips: first square frame
        return None

    def has(self, version: str, kind: str, names) -> bool:
        return self.texture(version, kind, names) is not None

    def gui(self, version: str, rel: str) -> np.ndarray | None:
        return self.image(version, f"gui/{rel}")

    def sprite_or_crop(self, version: str, sprite: str, sheet: str, box) -> np.ndarray | None:
        """1.20.2+ ships GUI sprites as separate files; older versions pack them in sheets."""
        a = self.image(version, f"gui/sprites/{sprite}.png")
        if a is not None:
            h = a.shape[0]
            w = a.shape[1]
            # animated / oversized sprites: keep the declared size from the sheet box
            return a[: min(h, box[3]), : min(w, box[2])] if box is not None else a
        s = self.image(version, f"gui/{sheet}")
        if s is None or box is None:
            return None
        x, y, w, h = box
        return s[y : y + h, x : x + w]
