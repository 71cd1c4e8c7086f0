"""Compose game screens with inventory icons: the in-game HUD hotbar, the player inventory, the crafting
table and the furnace, drawn from the real GUI textures at real GUI scales, over a real frame.

Coordinates in the game's GUI pixels (window pixels / GUI scale). Slot offsets (checked against the
textures: every listed slot is a 16x16 area of colour #8B8B8B framed by #373737, in all used versions):
  hotbar (gui/widgets.png 182x22, bottom centre): slot i at (3 + 20 i, 3)
  inventory.png 176x166: main 3x9 at (8, 84), hotbar row (8, 142), craft 2x2 (98, 18), result (154, 28),
      armour (8, 8 + 18 i), offhand (77, 62); pitch 18
  crafting_table.png: 3x3 at (30, 17), result (124, 35) (inside a 26x26 frame), inventory rows as above
  furnace.png: input (56, 17), fuel (56, 53), result (116, 35), flame (56, 36) 14x14, arrow (79, 34) 24x17
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import canvas as cv
from .assets import Assets, version_tuple
from .classes import ID, ICON_CLASSES
from .icons import (
    DISTRACTOR_BLOCKS,
    DISTRACTOR_ITEMS,
    ICON_CATALOG,
    BlockSpec,
    Font,
    ItemSpec,
    available_specs,
    durability_color,
    render_spec,
)
from .rng import choice

WINDOW_SIZES = [(854, 480), (1280, 720), (1920, 1080), (1024, 768), (1600, 900)]
SCREENS = ["hotbar", "inventory", "crafting_table", "furnace"]
SCREEN_P = [0.3, 0.3, 0.2, 0.2]

SLOT = (139, 139, 139)
TITLE = (64, 64, 64)
WHITE = (255, 255, 255)
SHADOW = (63, 63, 63)  # (0xFFFFFF & 0xFCFCFC) >> 2


def auto_gui_scale(W: int, H: int, max_scale: int = 8) -> int:
    """The game's "Auto" GUI scale: the largest s with W/s >= 320 and H/s >= 240."""
    s = 1
    while s < max_scale and W // (s + 1) >= 320 and H // (s + 1) >= 240:
        s += 1
    return s


def pick_gui_scale(W: int, H: int, rng) -> int:
    auto = auto_gui_scale(W, H)
    if auto <= 2 or rng.random() < 0.6:
        return max(2, auto)
    return int(rng.integers(2, auto))  # a smaller allowed scale (2 .. auto-1)


def _inv_rows():
    return [(8 + 18 * c, 84 + 18 * r) for r in range(3) for c in range(9)], [(8 + 18 * c, 142) for c in range(9)]


@dataclass
class Placed:
    cls: str | None  # our class name, or None for a distractor
    box: tuple  # (x1, y1, x2, y2) window pixels, tight to the icon's opaque pixels
    where: str
    slot: tuple = (0, 0)  # (gx, gy) GUI pixels: the top-left of the 16x16 item area it is drawn in
    count: int = 1  # the stack count drawn with it (1: none drawn)


@dataclass
class Screen:
    assets: Assets
    version: str
    W: int
    H: int
    s: int
    rng: np.random.Generator
    canvas: np.ndarray
    placed: list = field(default_factory=list)
    hovered: tuple | None = None  # (gx, gy) of the slot under the highlight

    def __post_init__(self):
        self.sw = -(-self.W // self.s)  # ceil, as the game does
        self.sh = -(-self.H // self.s)
        self.font = Font(self.assets.image(self.version, "font/ascii.png"))
        self.class_specs = {c: available_specs(self.assets, self.version, ICON_CATALOG[c]) for c in ICON_CLASSES}
        self.distractors = available_specs(self.assets, self.version, DISTRACTOR_ITEMS + DISTRACTOR_BLOCKS)
        self.new_gui = version_tuple(self.version) >= (1, 20, 2)

    # ---- primitives (GUI coordinates) ----
    def tex(self, rgba, gx, gy, alpha_mul=1.0):
        if rgba is not None:
            cv.blit(self.canvas, cv.upscale(rgba, self.s), gx * self.s, gy * self.s, alpha_mul)

    def rect(self, gx, gy, gw, gh, rgb, alpha=1.0):
        s = self.s
        cv.fill(self.canvas, gx * s, gy * s, gw * s, gh * s, rgb, alpha)

    def text(self, txt, gx, gy, rgb=WHITE, shadow=True, outline=None):
        m = cv.upscale(self.font.mask(txt).astype(np.uint8), self.s).astype(bool)
        s = self.s
        if outline is not None:
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                cv.paint_mask(self.canvas, m, (gx + dx) * s, (gy + dy) * s, outline)
        if shadow:
            sh = tuple(c // 4 for c in rgb) if rgb != WHITE else SHADOW
            cv.paint_mask(self.canvas, m, (gx + 1) * s, (gy + 1) * s, sh)
        cv.paint_mask(self.canvas, m, gx * s, gy * s, rgb)

    def sprite(self, sprite, sheet, box):
        return self.assets.sprite_or_crop(self.version, sprite, sheet, box)

    # ---- slot contents ----
    def random_stack(self):
        """(class name or None, spec) for a filled slot."""
        if self.rng.random() < 0.72 or not self.distractors:
            c = choice(self.rng, ICON_CLASSES)
            return c, choice(self.rng, self.class_specs[c])
        return None, choice(self.rng, self.distractors)

    def random_count(self, spec):
        stackable = spec.stackable if isinstance(spec, (ItemSpec, BlockSpec)) else True
        if not stackable or self.rng.random() < 0.4:
            return 1
        return int(min(64, math.floor(math.exp(self.rng.uniform(math.log(2), math.log(65))))))

    def draw_stack(self, gx, gy, cls, spec, where, count=None, alpha_mul=1.0, durability=True):
        icon = render_spec(self.assets, self.version, spec, self.s)
        if icon is None:
            return None
        x, y = gx * self.s, gy * self.s
        cv.blit(self.canvas, icon, x, y, alpha_mul)
        box = cv.alpha_bbox(icon, x, y)
        p = Placed(cls, box, where)
        self.placed.append(p)
        if durability and isinstance(spec, ItemSpec) and spec.tool and self.rng.random() < 0.35:
            frac = float(self.rng.uniform(0.02, 0.98))
            self.rect(gx + 2, gy + 13, 13, 2, (0, 0, 0))
            self.rect(gx + 2, gy + 13, max(1, int(round(13 * frac))), 1, durability_color(frac))
        count = self.random_count(spec) if count is None else count
        p.slot, p.count = (int(gx), int(gy)), int(count)
        if count > 1:
            t = str(count)
            self.text(t, gx + 17 - self.font.width(t), gy + 9)
        return p

    def fill_slots(self, slots, where, p_fill, allow=None):
        for gx, gy in slots:
            if self.rng.random() >= p_fill:
                continue
            cls, spec = self.random_stack()
            if allow is not None and cls not in allow:
                c = choice(self.rng, allow)
                cls, spec = c, choice(self.rng, self.class_specs[c])
            self.draw_stack(gx, gy, cls, spec, where)

    # ---- HUD ----
    def draw_crosshair(self):
        ch = self.sprite("hud/crosshair", "icons.png", (0, 0, 15, 15))
        if ch is None:
            return
        m = cv.upscale(ch, self.s)[..., 3] > 0
        x, y = (self.sw // 2 - 7) * self.s, (self.sh // 2 - 7) * self.s
        h, w = m.shape
        reg = self.canvas[y : y + h, x : x + w]
        mm = m[: reg.shape[0], : reg.shape[1]]
        reg[mm] = 255.0 - reg[mm]  # the game draws it with an inverting blend

    def draw_status(self):
        """Hearts, hunger, XP bar (survival HUD), all distractors."""
        left, top = self.sw // 2 - 91, self.sh - 39
        r = self.rng
        bg = self.sprite("hud/experience_bar_background", "icons.png", (0, 64, 182, 5))
        fg = self.sprite("hud/experience_bar_progress", "icons.png", (0, 69, 182, 5))
        self.tex(bg, left, self.sh - 29)
        if fg is not None:
            k = int(r.integers(0, 183))
            self.tex(fg[:, :k], left, self.sh - 29)
        if r.random() < 0.5:
            lvl = str(int(r.integers(1, 40)))
            self.text(lvl, (self.sw - self.font.width(lvl)) // 2, self.sh - 35, (128, 255, 32), shadow=False, outline=(0, 0, 0))
        hearts = int(r.integers(1, 21))
        food = int(r.integers(0, 21))
        hc = self.sprite("hud/heart/container", "icons.png", (16, 0, 9, 9))
        hf = self.sprite("hud/heart/full", "icons.png", (52, 0, 9, 9))
        hh = self.sprite("hud/heart/half", "icons.png", (61, 0, 9, 9))
        fc = self.sprite("hud/food_empty", "icons.png", (16, 27, 9, 9))
        ff = self.sprite("hud/food_full", "icons.png", (52, 27, 9, 9))
        fh = self.sprite("hud/food_half", "icons.png", (61, 27, 9, 9))
        for i in range(10):
            x = left + i * 8
            self.tex(hc, x, top)
            if hearts >= 2 * i + 2:
                self.tex(hf, x, top)
            elif hearts == 2 * i + 1:
                self.tex(hh, x, top)
            xf = self.sw // 2 + 91 - i * 8 - 9
            self.tex(fc, xf, top)
            if food >= 2 * i + 2:
                self.tex(ff, xf, top)
            elif food == 2 * i + 1:
                self.tex(fh, xf, top)
        if r.random() < 0.3:
            armor = int(r.integers(1, 21))
            af = self.sprite("hud/armor_full", "icons.png", (34, 9, 9, 9))
            ah = self.sprite("hud/armor_half", "icons.png", (25, 9, 9, 9))
            ae = self.sprite("hud/armor_empty", "icons.png", (16, 9, 9, 9))
            for i in range(10):
                t = af if armor >= 2 * i + 2 else ah if armor == 2 * i + 1 else ae
                self.tex(t, left + i * 8, top - 10)

    def draw_hotbar(self, p_fill):
        hb = self.sprite("hud/hotbar", "widgets.png", (0, 0, 182, 22))
        sel = self.sprite("hud/hotbar_selection", "widgets.png", (0, 22, 24, 24))
        left, top = self.sw // 2 - 91, self.sh - 22
        self.tex(hb, left, top)
        k = int(self.rng.integers(0, 9))
        self.tex(sel, left - 1 + 20 * k, top - 1)
        if version_tuple(self.version) >= (1, 9) and self.rng.random() < 0.15:
            off = self.sprite("hud/hotbar_offhand_left", "widgets.png", (24, 22, 29, 24))
            self.tex(off, left - 29, top - 1)
            cls, spec = self.random_stack()
            self.draw_stack(left - 26, self.sh - 19, cls, spec, "offhand")
        self.fill_slots([(left + 3 + 20 * i, top + 3) for i in range(9)], "hud_hotbar", p_fill)

    def darken(self):
        """Screen.renderBackground in a world: vertical gradient #C0101010 -> #D0101010."""
        a = np.linspace(0xC0 / 255.0, 0xD0 / 255.0, self.H, dtype=np.float32)[:, None, None]
        self.canvas *= 1.0 - a
        self.canvas += 16.0 * a

    # ---- container screens ----
    def container(self, kind, p_fill):
        panel = self.assets.gui(self.version, f"container/{kind}.png")
        left, top = (self.sw - 176) // 2, (self.sh - 166) // 2
        self.tex(panel[:166, :176], left, top)
        main, hot = _inv_rows()
        v = version_tuple(self.version)
        # recipe book button (1.12+)
        btn = None
        if v >= (1, 20, 2):
            btn = self.assets.image(self.version, "gui/sprites/recipe_book/button.png")
        elif v >= (1, 13):
            b = self.assets.gui(self.version, "recipe_button.png")
            btn = None if b is None else b[0:18, 0:20]
        elif v >= (1, 12) and kind in ("inventory", "crafting_table"):
            btn = panel[0:18, 178:198] if kind == "inventory" else panel[168:186, 0:20]
        if btn is not None:
            bx, by = {"inventory": (left + 104, self.sh // 2 - 22), "crafting_table": (left + 5, self.sh // 2 - 49),
                      "furnace": (left + 20, self.sh // 2 - 49)}[kind]
            self.tex(btn, bx, by)
        extra = []
        if kind == "inventory":
            self.text("Crafting", left + 97, top + 8 if v < (1, 14) else top + 6, TITLE, shadow=False)
            grid = [(left + 98 + 18 * c, top + 18 + 18 * r) for r in range(2) for c in range(2)]
            result = [(left + 154, top + 28)]
            armor = [(left + 8, top + 8 + 18 * i) for i in range(4)]
            # player model area stays dark; empty armour slots show their outline icons
            names = ["empty_armor_slot_helmet", "empty_armor_slot_chestplate", "empty_armor_slot_leggings", "empty_armor_slot_boots"]
            for (gx, gy), n in zip(armor, names):
                if self.rng.random() < 0.15:
                    cls, spec = None, choice(self.rng, [d for d in self.distractors if "helmet" in d.key or "chestplate" in d.key] or self.distractors)
                    self.draw_stack(gx, gy, cls, spec, "armor", count=1)
                else:
                    self.tex(self.assets.texture(self.version, "items", n), gx, gy)
            if v >= (1, 9):
                if self.rng.random() < 0.3:
                    cls, spec = self.random_stack()
                    self.draw_stack(left + 77, top + 62, cls, spec, "offhand")
                else:
                    self.tex(self.assets.texture(self.version, "items", "empty_armor_slot_shield"), left + 77, top + 62)
            extra = [(grid, "craft_grid", 0.45), (result, "craft_result", 0.5)]
        elif kind == "crafting_table":
            self.text("Crafting", left + 28, top + 6, TITLE, shadow=False)
            grid = [(left + 30 + 18 * c, top + 17 + 18 * r) for r in range(3) for c in range(3)]
            extra = [(grid, "craft_grid", 0.45), ([(left + 124, top + 35)], "craft_result", 0.5)]
        else:  # furnace
            t = "Furnace"
            self.text(t, left + (176 - self.font.width(t)) // 2, top + 6, TITLE, shadow=False)
            fuel_full = self.rng.random() < 0.6
            if fuel_full or self.rng.random() < 0.3:
                flame = self.sprite("container/furnace/lit_progress", f"container/{kind}.png", (176, 0, 14, 14))
                if flame is not None:
                    k = int(self.rng.integers(1, 15))
                    self.tex(flame[14 - k :], left + 56, top + 36 + 14 - k)
                arrow = self.sprite("container/furnace/burn_progress", f"container/{kind}.png", (176, 14, 24, 17))
                if arrow is not None:
                    k = int(self.rng.integers(0, 25))
                    self.tex(arrow[:, :k], left + 79, top + 34)
            extra = [([(left + 56, top + 17)], "furnace_input", 0.7), ([(left + 56, top + 53)], "furnace_fuel", 0.7 if fuel_full else 0.3),
                     ([(left + 116, top + 35)], "furnace_result", 0.5)]
        if kind != "inventory":  # the player inventory screen only shows the "Crafting" title
            self.text("Inventory", left + 8, top + 72, TITLE, shadow=False)
        for slots, where, p in extra:
            self.fill_slots(slots, where, max(p, p_fill))
        self.fill_slots([(left + x, top + y) for x, y in main], "inventory", p_fill)
        self.fill_slots([(left + x, top + y) for x, y in hot], "inventory_hotbar", p_fill)
        # the slot under the mouse is highlighted (white, 50%) over its item
        all_slots = [(left + x, top + y) for x, y in main + hot]
        if self.rng.random() < 0.4:
            gx, gy = choice(self.rng, all_slots)
            self.rect(gx, gy, 16, 16, WHITE, 0.5)
            self.hovered = (int(gx), int(gy))
        # an item stack carried by the mouse, drawn over everything
        if self.rng.random() < 0.25:
            mx = int(self.rng.integers(left - 20, left + 196))
            my = int(self.rng.integers(top - 20, top + 186))
            before = len(self.placed)
            cls, spec = self.random_stack()
            p = self.draw_stack(mx - 8, my - 8, cls, spec, "cursor")
            if p is not None and p.box is not None:
                self._occlude(p.box, self.placed[:before])

    def _occlude(self, box, others):
        x1, y1, x2, y2 = box
        for q in others:
            if q.box is None:
                continue
            a1, b1, a2, b2 = q.box
            ix = max(0, min(x2, a2) - max(x1, a1))
            iy = max(0, min(y2, b2) - max(y1, b1))
            if ix * iy > 0.4 * (a2 - a1) * (b2 - b1):
                q.cls = None  # mostly hidden under the carried stack: do not label


def compose_icons(assets: Assets, rng: np.random.Generator, background: np.ndarray, bg_boxes, version: str,
                  screen: str | None = None, window=None, gui_scale: int | None = None):
    """Returns (uint8 RGB image at window size, boxes [(class_id, x1, y1, x2, y2)], meta dict).

    BACKGROUND is a real frame (RGB uint8, any size) with its boxes (BG_BOXES) in its own pixels; they are
    carried over (mapped, shrunk where the GUI covers them, dropped when mostly hidden)."""
    W, H = window if window is not None else choice(rng, WINDOW_SIZES)
    s = gui_scale if gui_scale is not None else pick_gui_scale(W, H, rng)
    screen = screen or choice(rng, SCREENS, p=SCREEN_P)
    bg, bg_mapped = cv.crop_resize(background, W, H, rng, bg_boxes)
    canvas = bg.astype(np.float32)
    before = canvas.copy()
    scr = Screen(assets, version, W, H, s, rng, canvas)
    p_fill = float(rng.uniform(0.2, 0.75))
    hud_status = rng.random() < 0.7
    if rng.random() < 0.8:
        scr.draw_crosshair()
    if hud_status:
        scr.draw_status()
    scr.draw_hotbar(p_fill if screen == "hotbar" else float(rng.uniform(0.2, 0.8)))
    if screen != "hotbar":
        scr.darken()
        scr.container(screen, p_fill)
    img = np.clip(canvas + 0.5, 0, 255).astype(np.uint8)
    boxes = []
    for p in scr.placed:
        if p.cls is not None and p.box is not None:
            boxes.append((ID[p.cls], *p.box))
    # background objects: keep where the world is still visible (GUI textures cover it opaquely)
    covered = np.abs(canvas - before).max(axis=2) > 40 if screen == "hotbar" else _panel_mask(scr, screen)
    boxes += [(c, *b) for c, *b in cv.occlude_boxes(bg_mapped, covered)]
    meta = {"screen": screen, "window": f"{W}x{H}", "gui_scale": s, "texture_version": version,
            # every drawn stack: [where, gx, gy, count] (GUI px, the item area's top-left; count 1 = none drawn),
            # so the stack-count reader can be measured on these frames (tools/detector/measure_counts.py)
            "slots": [[p.where, *p.slot, p.count] for p in scr.placed],
            "hovered": None if scr.hovered is None else list(scr.hovered)}
    return img, boxes, meta


def _panel_mask(scr: Screen, screen: str) -> np.ndarray:
    m = np.zeros((scr.H, scr.W), dtype=bool)
    s = scr.s
    left, top = (scr.sw - 176) // 2, (scr.sh - 166) // 2
    m[top * s : (top + 166) * s, left * s : (left + 176) * s] = True
    hl = scr.sw // 2 - 91
    m[(scr.sh - 22) * s :, hl * s : (hl + 182) * s] = True
    return m
