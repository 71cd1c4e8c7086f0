"""Blocks in the world, in perspective: small voxel scenes (cave rooms, cliff walls, floors with lava or
water pools, bedrock floors) rendered with a pinhole camera and composited into real frames.

Rendering is exact per pixel: every exposed, camera-facing block face is rasterised inside its projected
bounding box by intersecting the pixel rays with the face plane (a perspective homography per face),
z-buffered, and textured with nearest-neighbour texel lookup (with a mip level chosen from the distance,
as the game's mipmaps do). Light: face shading as in the game (top 1.0, bottom 0.5, north/south 0.8,
east/west 0.6), a light level that falls off with distance from the player (caves) or full sky light
(surface), lava glow, the game's light-level-to-brightness curve, and a random screen-space gradient.

Labels: ores get one box per block (the bounding box of the block's visible pixels; or per face with
box_mode="face"); lava and water one box per connected pool, and bedrock one box per connected stretch of
bedrock blocks: its noise texture hides where one block of a floor ends, so per-block boxes on a bedrock
floor could not be drawn by a person and a detector cannot learn them (generator version 3; 2 had a box
per bedrock block).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .assets import Assets, version_tuple
from .classes import ID
from .rng import choice

WATER_TINT = np.array([0x3F, 0x76, 0xE4], dtype=np.float32) / 255.0
GRASS_TINT = np.array([0x79, 0xC0, 0x5A], dtype=np.float32) / 255.0
LIQUID_TOP = 0.875  # liquid surface height inside its cell (the game: 8/9 for a source block)

# material name -> (texture candidates for top, side, bottom), label class
MATERIALS = {
    "stone": (("stone",), ("stone",), ("stone",), None),
    "deepslate": (("deepslate_top",), ("deepslate",), ("deepslate_top",), None),
    "andesite": (("andesite", "stone_andesite"),) * 3 + (None,),
    "granite": (("granite", "stone_granite"),) * 3 + (None,),
    "diorite": (("diorite", "stone_diorite"),) * 3 + (None,),
    "tuff": (("tuff",),) * 3 + (None,),
    "dirt": (("dirt",),) * 3 + (None,),
    "gravel": (("gravel",),) * 3 + (None,),
    "sand": (("sand",),) * 3 + (None,),
    "grass": (("grass_block_top", "grass_top"), ("grass_block_side", "grass_side"), ("dirt",), None),
    "coal_ore": (("coal_ore",),) * 3 + ("coal_ore",),
    "iron_ore": (("iron_ore",),) * 3 + ("iron_ore",),
    "diamond_ore": (("diamond_ore",),) * 3 + ("diamond_ore",),
    "deepslate_coal_ore": (("deepslate_coal_ore",),) * 3 + ("coal_ore",),
    "deepslate_iron_ore": (("deepslate_iron_ore",),) * 3 + ("iron_ore",),
    "deepslate_diamond_ore": (("deepslate_diamond_ore",),) * 3 + ("diamond_ore",),
    "bedrock": (("bedrock",),) * 3 + ("bedrock",),
}
SHADE = {(1, 0): 1.0, (1, 1): 0.5, (0, 0): 0.6, (0, 1): 0.6, (2, 0): 0.8, (2, 1): 0.8}  # (axis, negative?)
DIRS = [(0, +1), (0, -1), (1, +1), (1, -1), (2, +1), (2, -1)]  # (axis, sign); axis 0=x, 1=y (up), 2=z

AIR, VOID = 0, -1
LIQ_NONE, LIQ_WATER, LIQ_LAVA = 0, 1, 2


def _mips(tex: np.ndarray) -> list[np.ndarray]:
    """Float RGBA mip chain (alpha-weighted box filter) down to 1x1."""
    out = [tex.astype(np.float32)]
    while out[-1].shape[0] > 1:
        a = out[-1]
        h, w = a.shape[0] // 2, a.shape[1] // 2
        b = a[: 2 * h, : 2 * w].reshape(h, 2, w, 2, 4)
        al = b[..., 3:4]
        rgb = (b[..., :3] * al).sum(axis=(1, 3)) / np.maximum(al.sum(axis=(1, 3)), 1e-6)
        out.append(np.concatenate([rgb, al.mean(axis=(1, 3))], axis=-1))
    return out


class Palette:
    """Per-version textures (mip chains) for the scene materials, plus liquids."""

    def __init__(self, assets: Assets, version: str):
        self.version = version
        self.v = version_tuple(version)
        self.names: list[str] = ["<air>"]
        self.tex: list = [None]  # per material: (top mips, side mips, bottom mips)
        self.label: list = [None]
        self.assets = assets
        water = assets.texture(version, "blocks", ["water_still"]).astype(np.float32)
        if self.v >= (1, 13):  # greyscale since 1.13, tinted by the biome water colour
            water[..., :3] *= WATER_TINT
        self.water = _mips(water)
        lava = assets.texture(version, "blocks", ["lava_still"]).copy()
        self.lava = _mips(lava)

    def has(self, name: str) -> bool:
        t, s, b, _ = MATERIALS[name]
        return all(self.assets.has(self.version, "blocks", n) for n in (t, s, b))

    def id(self, name: str) -> int:
        if name in self.names:
            return self.names.index(name)
        t, s, b, lab = MATERIALS[name]
        tt = [self.assets.texture(self.version, "blocks", n).astype(np.float32) for n in (t, s, b)]
        if name == "grass":
            tt[0][..., :3] *= GRASS_TINT
            # side: dirt with the tinted overlay fringe (grass_block_side_overlay), as the game draws it
            ov = self.assets.texture(self.version, "blocks", ["grass_block_side_overlay", "grass_side_overlay"])
            if ov is not None:
                o = ov.astype(np.float32)
                a = o[..., 3:4] / 255.0
                base = self.assets.texture(self.version, "blocks", ["dirt"]).astype(np.float32)
                base[..., :3] = base[..., :3] * (1 - a) + o[..., :3] * GRASS_TINT * a
                tt[1] = base
        self.names.append(name)
        self.tex.append(tuple(_mips(x) for x in tt))
        self.label.append(lab)
        return len(self.names) - 1


@dataclass
class Scene:
    mat: np.ndarray  # int16 (X, Y, Z): material id, 0 air, -1 void (never drawn)
    liq: np.ndarray  # int8 (X, Y, Z): liquid in air cells
    keep: np.ndarray  # bool (X, Y, Z): solid cells whose faces are drawn
    cam: np.ndarray  # camera position (world units, cell (i,j,k) spans [i, i+1])
    target: np.ndarray  # point to look at
    kind: str
    outdoor: bool


# ----------------------------------------------------------------------------------------------------------
# Scene generation


def _blobs(rng, mat, solid_mask, names_ids, n, rmin=1.0, rmax=2.6):
    X, Y, Z = mat.shape
    gx, gy, gz = np.meshgrid(np.arange(X), np.arange(Y), np.arange(Z), indexing="ij")
    for _ in range(n):
        c = rng.uniform([0, 0, 0], [X, Y, Z])
        r = rng.uniform(rmin, rmax, size=3)
        m = ((gx - c[0]) / r[0]) ** 2 + ((gy - c[1]) / r[1]) ** 2 + ((gz - c[2]) / r[2]) ** 2 <= 1.0
        mat[m & solid_mask & (mat > 0)] = choice(rng, names_ids)


def _exposed(mat, liq):
    """Solid cells with at least one air/liquid neighbour."""
    solid = mat > 0
    air = mat == AIR
    e = np.zeros_like(solid)
    for ax in range(3):
        for sh in (1, -1):
            n = np.roll(air, sh, axis=ax)
            # cells on the border must not see the wrapped-around column
            idx = [slice(None)] * 3
            idx[ax] = 0 if sh == 1 else -1
            n[tuple(idx)] = False
            e |= n
    return solid & e


HOST_ROCK = {"stone", "deepslate", "andesite", "granite", "diorite", "tuff"}


def _veins(rng, pal: Palette, mat, liq, keep, cam, fwd, ore_names, n_veins):
    """Ore veins grown from exposed rock cells (not soil) in front of the camera."""
    rock_ids = [i for i, n in enumerate(pal.names) if n in HOST_ROCK]
    rock = np.isin(mat, rock_ids)
    ex = _exposed(mat, liq) & keep & rock
    cells = np.argwhere(ex)
    if len(cells) == 0:
        return
    centres = cells + 0.5
    d = centres - cam
    dist = np.linalg.norm(d, axis=1)
    front = (d @ fwd) / np.maximum(dist, 1e-6)
    ok = (front > 0.6) & (dist > 1.5) & (dist < 10)
    cand = cells[ok] if ok.sum() > 0 else cells
    w = 1.0 / (1.0 + np.linalg.norm(cand + 0.5 - cam, axis=1)) ** 2
    for _ in range(n_veins):
        ore = choice(rng, ore_names)
        oid = pal.id(ore)
        start = cand[int(rng.choice(len(cand), p=w / w.sum()))]
        size = int(rng.integers(1, 7)) if "diamond" not in ore else int(rng.integers(1, 5))
        cur = [tuple(start)]
        placed = {tuple(start)}
        for _k in range(size * 3):
            if len(placed) >= size:
                break
            c = cur[int(rng.integers(0, len(cur)))]
            ax = int(rng.integers(0, 3))
            nb = list(c)
            nb[ax] += int(rng.choice([-1, 1]))
            nb = tuple(nb)
            if all(0 <= nb[i] < mat.shape[i] for i in range(3)) and rock[nb] and nb not in placed:
                placed.add(nb)
                cur.append(nb)
        for c in placed:
            mat[c] = oid
            rock[c] = False


def _look(cam, target, rng, jitter_deg=8.0):
    f = target - cam
    f = f / np.linalg.norm(f)
    yaw = math.atan2(f[0], f[2]) + math.radians(rng.normal(0, jitter_deg))
    pitch = math.asin(np.clip(f[1], -1, 1)) + math.radians(rng.normal(0, jitter_deg * 0.6))
    pitch = float(np.clip(pitch, math.radians(-80), math.radians(70)))
    return yaw, pitch


def make_scene(rng: np.random.Generator, pal: Palette, outdoor: bool, kind: str | None = None) -> Scene:
    X, Y, Z = 20, 12, 20
    mat = np.zeros((X, Y, Z), dtype=np.int16)
    liq = np.zeros((X, Y, Z), dtype=np.int8)
    v17 = pal.v >= (1, 17)
    deep = (not outdoor) and v17 and rng.random() < 0.55
    base = "deepslate" if deep else "stone"
    kinds = ["room", "wall", "pool", "bedrock"]
    if kind is None:
        kind = choice(rng, kinds, p=[0.3, 0.2, 0.36, 0.14] if not outdoor else [0.15, 0.3, 0.55, 0.0])
    if kind == "bedrock" and outdoor:
        kind = "pool"
    bid = pal.id(base)
    mat[:] = bid

    # --- carve the air: floor height map, optional ceiling, walls
    floor = np.full((X, Z), 3, dtype=np.int32)
    floor += (rng.random((X, Z)) < 0.25).astype(np.int32) * int(rng.choice([-1, 1]))
    floor = np.clip(cv2.blur(floor.astype(np.float32), (3, 3)).round().astype(np.int32), 1, 5)
    height = int(rng.integers(3, 7))
    ceil = floor + height + (rng.random((X, Z)) < 0.3).astype(np.int32)
    open_top = outdoor or rng.random() < 0.35
    gx, gy, gz = np.meshgrid(np.arange(X), np.arange(Y), np.arange(Z), indexing="ij")
    if kind == "wall":
        # a cliff face / cave wall at z >= wall_z (irregular, with blocks sticking out or set back)
        zw = int(rng.integers(11, 15))
        wall_z = zw + np.clip(np.cumsum(rng.integers(-1, 2, size=X)) // 2, -2, 2)
        z_of = wall_z[:, None] + (rng.random((X, Y)) < 0.12).astype(np.int32) - (rng.random((X, Y)) < 0.12).astype(np.int32)
        mat[(gz < z_of[:, :, None]) & (gy >= floor[:, None, :])] = AIR
        if open_top:
            h = int(floor.max() + rng.integers(3, 8))
            mat[:, h:, :][mat[:, h:, :] > 0] = VOID
        else:  # cave: a ceiling over the open space
            mat[(mat == AIR) & (gy >= ceil[:, None, :])] = bid
    else:
        x0, x1 = int(rng.integers(1, 5)), int(rng.integers(X - 5, X - 1))
        z0, z1 = int(rng.integers(1, 5)), int(rng.integers(Z - 5, Z - 1))
        jx0 = np.clip(x0 + np.cumsum(rng.integers(-1, 2, size=Z)) // 2, 0, X // 2 - 2)
        jx1 = np.clip(x1 + np.cumsum(rng.integers(-1, 2, size=Z)) // 2, X // 2 + 2, X)
        inside = (gx >= jx0[None, None, :]) & (gx < jx1[None, None, :]) & (gz >= z0) & (gz < z1)
        inside &= (gy >= floor[:, None, :]) & (gy < ceil[:, None, :])
        mat[inside] = AIR
        if open_top:  # no ceiling: above the room nothing is drawn (the real frame shows through)
            has_air = (mat == AIR).any(axis=1)
            top_air = np.where(has_air, Y - 1 - np.argmax((mat == AIR)[:, ::-1, :], axis=1), Y)
            above = gy > top_air[:, None, :]
            mat[above & (mat > 0) & has_air[:, None, :]] = VOID

    solid = mat > 0
    # --- materials
    blob_names = ["andesite", "granite", "diorite", "dirt", "gravel"]
    if v17:
        blob_names += ["tuff"] if deep else []
    blob_ids = [pal.id(n) for n in blob_names if pal.has(n)]
    _blobs(rng, mat, solid, blob_ids, int(rng.integers(1, 6)))
    if outdoor:
        # soil on top of ground and cliff columns: 1-3 dirt layers under grass, dirt or sand
        top_mat = pal.id(choice(rng, ["grass", "grass", "dirt", "sand"]))
        did = pal.id("dirt")
        for x in range(X):
            for z in range(Z):
                col = mat[x, :, z] > 0
                if not col[0]:
                    continue
                t = int(np.argmin(col)) - 1 if not col.all() else Y - 1  # top of the ground/cliff column
                if t + 1 < Y and mat[x, t + 1, z] != AIR:
                    continue  # under a ceiling or cut away: no soil
                depth = int(rng.integers(1, 4))
                mat[x, max(0, t - depth) : t + 1, z] = did
                mat[x, t, z] = top_mat
    if kind == "bedrock":
        bed = pal.id("bedrock")
        for x in range(X):
            for z in range(Z):
                f = floor[x, z]
                for y in range(0, f):
                    p = 1.0 if y <= f - 3 else (0.8 if y == f - 2 else 0.5)
                    if rng.random() < p:
                        mat[x, y, z] = bed
    # --- liquid pools in the floor
    if kind == "pool" or (kind == "room" and rng.random() < 0.5):
        n_p = int(rng.integers(1, 3))
        for _ in range(n_p):
            lt = LIQ_LAVA if rng.random() < (0.3 if outdoor else 0.5) else LIQ_WATER
            cx, cz = rng.uniform(4, X - 4), rng.uniform(4, Z - 4)
            rx, rz = rng.uniform(1.2, 4.0), rng.uniform(1.2, 4.0)
            for x in range(X):
                for z in range(Z):
                    if ((x + 0.5 - cx) / rx) ** 2 + ((z + 0.5 - cz) / rz) ** 2 <= 1.0:
                        col = mat[x, :, z]
                        air = np.where(col == AIR)[0]
                        if len(air) == 0:
                            continue
                        fy = air.min()  # first air cell above the floor
                        if fy >= 1 and mat[x, fy - 1, z] > 0:
                            d = 1 if rng.random() < 0.7 else 2
                            for y in range(max(1, fy - d), fy):
                                mat[x, y, z] = AIR
                                liq[x, y, z] = lt
        # liquid must not touch void or the grid border sideways: close pools with solid walls
        for x, y, z in np.argwhere(liq > 0):
            for ax, sg in DIRS:
                if ax == 1:
                    continue
                nb = [x, y, z]
                nb[ax] += sg
                if not (0 <= nb[0] < X and 0 <= nb[2] < Z):
                    liq[x, y, z] = 0
                    mat[x, y, z] = bid
                    break
                nbt = tuple(nb)
                if mat[nbt] == AIR and liq[nbt] == 0:
                    # the neighbour is air at the liquid's level: raise a rim so the pool stays a pool
                    mat[nbt] = bid
        # the pool floor below liquid: make sure it is solid
        for x, y, z in np.argwhere(liq > 0):
            if y > 0 and mat[x, y - 1, z] <= 0:
                mat[x, y - 1, z] = bid

    # --- camera: inside the air, eye height above the floor
    air_cells = np.argwhere((mat == AIR) & (liq == 0))
    cam = None
    for _ in range(50):
        c = air_cells[int(rng.integers(0, len(air_cells)))]
        x, y, z = c
        if y == 0 or mat[x, y - 1, z] <= 0 and liq[x, y - 1, z] == 0:
            continue
        if kind == "wall" and not (2 <= z <= 9):
            continue
        head = (x, y + 1, z)
        if y + 1 < Y and mat[head] > 0:
            continue
        cam = np.array([x + rng.uniform(0.2, 0.8), y + 1.62 + (rng.uniform(0, 2.5) if kind == "pool" else 0), z + rng.uniform(0.2, 0.8)])
        break
    if cam is None:
        c = air_cells[int(rng.integers(0, len(air_cells)))]
        cam = c + 0.5
    # look at a random exposed cell (ores are then grown near the line of sight)
    ex = np.argwhere(_exposed(mat, liq))
    if kind == "pool" and (liq > 0).any():
        tgt_cells = np.argwhere(liq > 0)
    elif kind == "bedrock":
        tgt_cells = np.argwhere(mat == pal.id("bedrock"))
        tgt_cells = tgt_cells[_exposed(mat, liq)[tuple(tgt_cells.T)]] if len(tgt_cells) else ex
        if len(tgt_cells) == 0:
            tgt_cells = ex
    elif kind == "wall":
        wall_faces = ex[(ex[:, 2] > 0) & (mat[ex[:, 0], ex[:, 1], np.maximum(ex[:, 2] - 1, 0)] == AIR)]
        tgt_cells = wall_faces if len(wall_faces) else ex
    else:
        tgt_cells = ex
    dists = np.linalg.norm(tgt_cells + 0.5 - cam, axis=1)
    okd = tgt_cells[(dists > 2.0) & (dists < 10)]
    tgt_cells = okd if len(okd) else tgt_cells
    target = tgt_cells[int(rng.integers(0, len(tgt_cells)))] + 0.5
    return Scene(mat, liq, np.ones_like(solid), cam, target, kind, outdoor)


# ----------------------------------------------------------------------------------------------------------
# Rendering


@dataclass
class Camera:
    pos: np.ndarray
    R: np.ndarray  # rows: right, up, forward (world)
    f: float  # focal length in pixels
    W: int
    H: int

    @staticmethod
    def from_angles(pos, yaw, pitch, fov_v_deg, W, H):
        cy, sy = math.cos(yaw), math.sin(yaw)
        cp, sp = math.cos(pitch), math.sin(pitch)
        fwd = np.array([sy * cp, sp, cy * cp])
        right = np.cross(fwd, [0.0, 1.0, 0.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, fwd)
        f = (H / 2) / math.tan(math.radians(fov_v_deg) / 2)
        return Camera(np.asarray(pos, float), np.stack([right, up, fwd]), f, W, H)

    def rays(self) -> np.ndarray:
        """World-space ray direction per pixel (H, W, 3), float32 (not normalised: forward component 1)."""
        xs = (np.arange(self.W, dtype=np.float32) + 0.5 - self.W / 2) / self.f
        ys = -(np.arange(self.H, dtype=np.float32) + 0.5 - self.H / 2) / self.f
        R = self.R.astype(np.float32)
        d = xs[None, :, None] * R[0] + ys[:, None, None] * R[1] + R[2]
        return d.astype(np.float32)

    def project(self, pts):
        c = (np.asarray(pts) - self.pos) @ self.R.T
        return c


def _brightness_curve(level, gamma):
    """The game's light-level -> brightness (lightmap) with the brightness (gamma) option."""
    b0 = np.clip(level, 0, 15) / 15.0
    f = 1.0 - b0
    b = b0 / (f * 3.0 + 1.0)
    inv = 1.0 - b
    b = b * (1.0 - gamma) + (1.0 - inv**4) * gamma
    return b * 0.96 + 0.03


def _face_list(scene: Scene, cam: Camera):
    mat, liq, keep = scene.mat, scene.liq, scene.keep
    X, Y, Z = mat.shape
    faces = []  # (cell, axis, sign, material, liquid)
    solid = (mat > 0) & keep
    open_ = (mat == AIR)  # air or liquid
    for ax, sg in DIRS:
        nb_open = np.zeros_like(open_)
        src = [slice(None)] * 3
        dst = [slice(None)] * 3
        if sg > 0:
            src[ax] = slice(1, None)
            dst[ax] = slice(0, -1)
        else:
            src[ax] = slice(0, -1)
            dst[ax] = slice(1, None)
        nb_open[tuple(dst)] = open_[tuple(src)]
        nb_liq = np.zeros_like(liq)
        nb_liq[tuple(dst)] = liq[tuple(src)]
        # solid faces towards air/liquid
        m = solid & nb_open
        for c in np.argwhere(m):
            faces.append((c, ax, sg, int(mat[tuple(c)]), 0))
        # liquid faces: top towards air (surface), sides towards plain air
        lm = (liq > 0) & nb_open & (nb_liq == 0)
        if ax == 1 and sg < 0:
            lm[:] = False
        for c in np.argwhere(lm):
            faces.append((c, ax, sg, 0, int(liq[tuple(c)])))
    # back-face culling and rough frustum culling
    out = []
    for c, ax, sg, m_id, lq in faces:
        plane = c[ax] + (1.0 if sg > 0 else 0.0)
        if lq and ax == 1 and sg > 0:
            plane = c[ax] + LIQUID_TOP
        if (cam.pos[ax] - plane) * sg <= 1e-6:
            continue
        out.append((c, ax, sg, m_id, lq, plane))
    return out


def _face_corners(c, ax, sg, plane, lq):
    lo = c.astype(np.float64)
    hi = lo + 1.0
    if lq and ax != 1:
        hi = hi.copy()
        hi[1] = lo[1] + LIQUID_TOP
    a1, a2 = [a for a in range(3) if a != ax]
    pts = []
    for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
        p = np.zeros(3)
        p[ax] = plane
        p[a1] = lo[a1] if u == 0 else hi[a1]
        p[a2] = lo[a2] if v == 0 else hi[a2]
        pts.append(p)
    return np.array(pts)


def _clip_near(cpts, near=0.05):
    """Sutherland-Hodgman clip of a camera-space polygon against z >= near."""
    out = []
    n = len(cpts)
    for i in range(n):
        a, b = cpts[i], cpts[(i + 1) % n]
        ina, inb = a[2] >= near, b[2] >= near
        if ina:
            out.append(a)
        if ina != inb:
            t = (near - a[2]) / (b[2] - a[2])
            out.append(a + t * (b - a))
    return np.array(out)


def _uv(ax, sg, lx, ly, lz):
    """Texture (u, v) in [0,1) for a face, so that side textures stand upright as in the game."""
    if ax == 1:
        return (lx, lz) if sg > 0 else (lx, 1.0 - lz)
    if ax == 0:
        return (1.0 - lz if sg > 0 else lz), 1.0 - ly
    return (lx if sg > 0 else 1.0 - lx), 1.0 - ly


def render_scene(scene: Scene, pal: Palette, cam: Camera, rng: np.random.Generator, light: dict):
    """Z-buffered face rasterisation. Returns (rgb float32 (H,W,3), alpha bool, emissive bool (lava),
    owner int32 (opaque face index per pixel), wowner int32 (water face index), faces, face_meta)."""
    W, H = cam.W, cam.H
    D = cam.rays()
    Dc = [np.ascontiguousarray(D[..., i]) for i in range(3)]
    Dn = np.sqrt(Dc[0] ** 2 + Dc[1] ** 2 + Dc[2] ** 2)
    del D
    zbuf = np.full((H, W), np.inf, dtype=np.float32)
    rgb = np.zeros((H, W, 3), dtype=np.float32)
    owner = np.full((H, W), -1, dtype=np.int32)
    emis = np.zeros((H, W), dtype=bool)
    wz = np.full((H, W), np.inf, dtype=np.float32)
    wcol = np.zeros((H, W, 4), dtype=np.float32)
    wowner = np.full((H, W), -1, dtype=np.int32)
    faces = _face_list(scene, cam)
    # front to back: later (farther) faces fail the depth test early and skip the texturing work
    centres = np.array([f[0] + 0.5 for f in faces]) if faces else np.zeros((0, 3))
    order = np.argsort(np.linalg.norm(centres - cam.pos, axis=1), kind="stable") if faces else []
    faces = [faces[i] for i in order]
    lava_cells = np.argwhere(scene.liq == LIQ_LAVA).astype(np.float32) + 0.5
    campos = cam.pos.astype(np.float32)
    face_meta = []
    old = np.seterr(divide="ignore", invalid="ignore")
    try:
        for fi, (c, ax, sg, m_id, lq, plane) in enumerate(faces):
            face_meta.append(None)
            corners = _face_corners(c, ax, sg, plane, lq)
            cp = _clip_near(cam.project(corners))
            if len(cp) < 3:
                continue
            px = cp[:, 0] / cp[:, 2] * cam.f + W / 2
            py = -cp[:, 1] / cp[:, 2] * cam.f + H / 2
            x0, x1 = max(0, int(math.floor(px.min())) - 1), min(W, int(math.ceil(px.max())) + 1)
            y0, y1 = max(0, int(math.floor(py.min())) - 1), min(H, int(math.ceil(py.max())) + 1)
            if x0 >= x1 or y0 >= y1:
                continue
            a1, a2 = [a for a in range(3) if a != ax]
            t = (np.float32(plane) - campos[ax]) / Dc[ax][y0:y1, x0:x1]
            l1 = campos[a1] - np.float32(c[a1]) + t * Dc[a1][y0:y1, x0:x1]
            l2 = campos[a2] - np.float32(c[a2]) + t * Dc[a2][y0:y1, x0:x1]
            top = LIQUID_TOP if (lq and ax != 1) else 1.0
            lim1 = top if a1 == 1 else 1.0
            lim2 = top if a2 == 1 else 1.0
            m = (t > 0.05) & (l1 >= 0) & (l1 < lim1) & (l2 >= 0) & (l2 < lim2)
            if lq == LIQ_WATER:
                m &= (t < wz[y0:y1, x0:x1]) & (t < zbuf[y0:y1, x0:x1])
            else:
                m &= t < zbuf[y0:y1, x0:x1]
            ys, xs = np.nonzero(m)
            if len(ys) == 0:
                continue
            tm = t[ys, xs]
            loc = [None, None, None]
            loc[ax] = np.zeros(len(ys), dtype=np.float32)
            loc[a1] = np.clip(l1[ys, xs], 0, 0.99999)
            loc[a2] = np.clip(l2[ys, xs], 0, 0.99999)
            lx, ly, lz = loc
            if lq and ax != 1:
                ly = np.clip(ly / LIQUID_TOP, 0, 0.99999)
            u, v = _uv(ax, sg, lx, ly, lz)
            dist = float(np.linalg.norm(corners.mean(axis=0) - cam.pos))
            ppt = cam.f / max(dist, 1e-3) / 16.0  # screen pixels per texel
            level = int(np.clip(math.floor(math.log2(1.0 / ppt)) + 1 if ppt < 1 else 0, 0, 4))
            if lq == LIQ_WATER:
                chain = pal.water
            elif lq == LIQ_LAVA:
                chain = pal.lava
            else:
                tt = pal.tex[m_id]
                chain = tt[0] if (ax == 1 and sg > 0) else tt[2] if ax == 1 else tt[1]
            tex = chain[min(level, len(chain) - 1)]
            th, tw = tex.shape[:2]
            iv = np.minimum((v * th).astype(np.intp), th - 1)
            iu = np.minimum((u * tw).astype(np.intp), tw - 1)
            col = tex[iv, iu]
            shade = SHADE[(ax, 1 if sg < 0 else 0)]
            ys += y0
            xs += x0
            if lq == LIQ_LAVA:
                b = np.float32(shade)
            else:
                if light["outdoor"]:
                    lev = np.float32(light["sky"])
                else:
                    tdist = tm * Dn[ys, xs]
                    lev = np.maximum(light["ambient"], light["player"] - tdist * light["falloff"])
                    if len(lava_cells):
                        P = np.stack([campos[i] + tm * Dc[i][ys, xs] for i in range(3)], axis=1)
                        md = np.abs(P[:, None, :] - lava_cells[None, :, :]).sum(axis=2).min(axis=1)
                        lev = np.maximum(lev, 15.0 - md)
                b = (_brightness_curve(lev, light["gamma"]) * shade).astype(np.float32)
            bb = b[:, None] if np.ndim(b) else b
            if lq == LIQ_WATER:
                wz[ys, xs] = tm
                wcol[ys, xs, :3] = col[:, :3] * bb
                wcol[ys, xs, 3] = col[:, 3] / 255.0
                wowner[ys, xs] = fi
            else:
                zbuf[ys, xs] = tm
                rgb[ys, xs] = col[:, :3] * bb
                owner[ys, xs] = fi
                if lq == LIQ_LAVA:
                    emis[ys, xs] = True
            face_meta[fi] = (tuple(int(a) for a in c), ax, sg, m_id, lq)
    finally:
        np.seterr(**old)
    # water over what is behind it (only where it is in front of the opaque surface)
    wm = (wowner >= 0) & (wz < zbuf)
    if wm.any():
        a = wcol[..., 3:4] * wm[..., None]
        rgb = rgb * (1 - a) + wcol[..., :3] * a
    alpha = (owner >= 0) | wm
    wowner[~wm] = -1
    return rgb, alpha, emis, owner, wowner, faces, face_meta


def _components(cells: np.ndarray) -> dict:
    """Connected components (6-neighbour) of a set of cells: cell tuple -> component id."""
    s = {tuple(int(v) for v in c) for c in cells}
    comp = {}
    k = 0
    for c in sorted(s):
        if c in comp:
            continue
        stack = [c]
        comp[c] = k
        while stack:
            x, y, z = stack.pop()
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                n = (x + dx, y + dy, z + dz)
                if n in s and n not in comp:
                    comp[n] = k
                    stack.append(n)
        k += 1
    return comp


def label_groups(scene: Scene, pal: Palette, owner, wowner, faces, face_meta, box_mode="block", min_px=24,
                 image=None, min_luma=22.0):
    """Boxes [(class_id, x1, y1, x2, y2)] from the visible pixels."""
    lava = _components(np.argwhere(scene.liq == LIQ_LAVA))
    water = _components(np.argwhere(scene.liq == LIQ_WATER))
    bedrock_ids = [m for m, lab in enumerate(pal.label) if lab == "bedrock"]
    bedrock = _components(np.argwhere(np.isin(scene.mat, bedrock_ids)))
    n = len(faces)
    gkey = {}
    face_group = np.full(n + 1, -1, dtype=np.int64)
    classes = []
    for fi, fm in enumerate(face_meta):
        if fm is None:
            continue
        c, ax, sg, m_id, lq = fm
        if lq == LIQ_LAVA:
            key, cls = ("lava", lava[c]), "lava"
        elif lq == LIQ_WATER:
            key, cls = ("water", water[c]), "water"
        else:
            cls = pal.label[m_id]
            if cls is None:
                continue
            if cls == "bedrock":
                key = ("bedrock", bedrock[c])
            else:
                key = (cls, c) if box_mode == "block" else (cls, c, ax, sg)
        if key not in gkey:
            gkey[key] = len(classes)
            classes.append(cls)
        face_group[fi] = gkey[key]
    if not classes:
        return []
    boxes = []
    G = len(classes)
    x1 = np.full(G, 1 << 30)
    y1 = np.full(G, 1 << 30)
    x2 = np.full(G, -1)
    y2 = np.full(G, -1)
    cnt = np.zeros(G, dtype=np.int64)
    lum = np.zeros(G, dtype=np.float64)
    luma = None if image is None else image.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    for own in (owner, wowner):
        ys, xs = np.nonzero(own >= 0)
        g = face_group[own[ys, xs]]
        ok = g >= 0
        ys, xs, g = ys[ok], xs[ok], g[ok]
        np.minimum.at(x1, g, xs)
        np.minimum.at(y1, g, ys)
        np.maximum.at(x2, g, xs)
        np.maximum.at(y2, g, ys)
        np.add.at(cnt, g, 1)
        if luma is not None:
            np.add.at(lum, g, luma[ys, xs])
    for k in range(G):
        if cnt[k] < min_px or x2[k] - x1[k] < 4 or y2[k] - y1[k] < 4:
            continue
        if luma is not None and lum[k] / cnt[k] < min_luma:
            continue  # too dark to see: a person would not label it either
        boxes.append((ID[classes[k]], int(x1[k]), int(y1[k]), int(x2[k]) + 1, int(y2[k]) + 1))
    return boxes


def _solid_components(mat: np.ndarray):
    """Label 6-connected components of solid cells (iterative flood fill, small grids only)."""
    X, Y, Z = mat.shape
    lab = np.full(mat.shape, -1, dtype=np.int32)
    solid = mat > 0
    sizes = []
    for start in np.argwhere(solid):
        s0 = tuple(start)
        if lab[s0] >= 0:
            continue
        k = len(sizes)
        lab[s0] = k
        stack = [s0]
        n = 0
        while stack:
            x, y, z = stack.pop()
            n += 1
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                q = (x + dx, y + dy, z + dz)
                if 0 <= q[0] < X and 0 <= q[1] < Y and 0 <= q[2] < Z and solid[q] and lab[q] < 0:
                    lab[q] = k
                    stack.append(q)
        sizes.append(n)
    return lab, sizes


def _cut(scene: Scene, rng: np.random.Generator, fwd: np.ndarray) -> None:
    X, Y, Z = scene.mat.shape
    gx, gz = np.meshgrid(np.arange(X) + 0.5, np.arange(Z) + 0.5, indexing="ij")
    beyond = np.zeros((X, Z), dtype=bool)
    f2 = np.array([fwd[0], fwd[2]])
    f2 = f2 / max(np.linalg.norm(f2), 1e-6)
    side = np.array([-f2[1], f2[0]])
    planes = []
    if scene.kind != "wall" and rng.random() < 0.6:
        planes.append((f2, float(rng.uniform(6, 13))))  # far cut: the floor/room ends
    for sgn in (1, -1):
        if rng.random() < 0.45:
            planes.append((side * sgn, float(rng.uniform(2.5, 8))))  # lateral cuts
    if not planes:
        planes.append((side * (1 if rng.random() < 0.5 else -1), float(rng.uniform(2.5, 8))))
    for n, d in planes:
        ang = math.radians(rng.normal(0, 12))
        c, s_ = math.cos(ang), math.sin(ang)
        n = np.array([c * n[0] - s_ * n[1], s_ * n[0] + c * n[1]])
        beyond |= ((gx - scene.cam[0]) * n[0] + (gz - scene.cam[2]) * n[1]) > d
    cut = np.broadcast_to(beyond[:, None, :], scene.mat.shape)
    scene.mat[cut] = VOID
    scene.liq[cut] = 0
    # liquid cells next to the cut lose their rim: keep them only if all horizontal neighbours remain
    for x, y, z in np.argwhere(scene.liq > 0):
        for ax, sg in DIRS:
            if ax == 1:
                continue
            q = [x, y, z]
            q[ax] += sg
            if not (0 <= q[0] < X and 0 <= q[2] < Z) or scene.mat[tuple(q)] == VOID:
                scene.liq[x, y, z] = 0
                break
    lab, sizes = _solid_components(scene.mat)
    if sizes:
        main = int(np.argmax(sizes))
        scene.mat[(lab >= 0) & (lab != main)] = VOID



def compose_world(assets: Assets, rng: np.random.Generator, background: np.ndarray, bg_boxes, version: str,
                  outdoor: bool, size=(1280, 720), kind: str | None = None, box_mode: str = "block"):
    """Render a voxel scene over a real frame. Returns (uint8 RGB image, boxes, meta)."""
    from . import canvas as cvs

    W, H = size
    pal = Palette(assets, version)
    scene = make_scene(rng, pal, outdoor, kind)
    fov = float(rng.uniform(60, 90))
    yaw, pitch = _look(scene.cam, scene.target, rng)
    cam = Camera.from_angles(scene.cam, yaw, pitch, fov, W, H)
    fwd = cam.R[2]
    # patch over the real frame: cut the scene by 1-2 vertical planes (the camera stays on the kept side),
    # so that the real frame shows beyond; then drop pieces no longer attached to the main body
    bg, bg_mapped = cvs.crop_resize(background, W, H, rng, bg_boxes)
    if rng.random() < 0.7:
        _cut(scene, rng, fwd)
    deep = "deepslate" in pal.names
    ores = ["coal_ore", "iron_ore", "diamond_ore"]
    if deep:
        ores = ["deepslate_" + o for o in ores] + (["diamond_ore", "iron_ore"] if rng.random() < 0.3 else [])
    n_veins = int(rng.integers(1, 6)) if scene.kind in ("room", "wall") else int(rng.integers(0, 3))
    if n_veins:
        _veins(rng, pal, scene.mat, scene.liq, scene.keep, scene.cam, fwd, ores, n_veins)
    bg_lum = float(bg.mean())
    if outdoor:
        light = {"outdoor": True, "sky": float(rng.uniform(12.5, 15)), "gamma": float(rng.uniform(0.3, 1.0))}
    else:
        light = {"outdoor": False, "ambient": float(rng.uniform(2, 7)), "player": float(rng.uniform(11, 15)),
                 "falloff": float(rng.uniform(0.3, 1.0)), "gamma": float(rng.uniform(0.3, 1.0))}
    rgb, alpha, emis, owner, wowner, faces, face_meta = render_scene(scene, pal, cam, rng, light)
    # exposure: roughly match the real frame (caves are dark, surface frames bright)
    lit = alpha & ~emis
    k = 1.0
    if lit.any() and not outdoor:
        m = float(rgb[lit].mean())
        target = float(np.clip(bg_lum * rng.uniform(0.8, 1.5), 20, 140))
        k = float(np.clip(target / max(m, 1e-3), 0.6, 1.8))
    elif outdoor:
        k = float(rng.uniform(0.8, 1.05))
    # screen-space brightness gradient
    gxv = float(rng.uniform(-0.2, 0.2)) * (np.arange(W, dtype=np.float32) / W - 0.5)
    gyv = float(rng.uniform(-0.2, 0.2)) * (np.arange(H, dtype=np.float32) / H - 0.5)
    g = (1.0 + gyv[:, None] + gxv[None, :]) * k
    g[emis] = 1.0
    rgb *= g[..., None]
    out = np.where(alpha[..., None], rgb, bg.astype(np.float32))
    img = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    boxes = label_groups(scene, pal, owner, wowner, faces, face_meta, box_mode=box_mode, image=img)
    boxes += [(c, *b) for c, *b in cvs.occlude_boxes(bg_mapped, alpha)]
    meta = {"screen": f"world_{scene.kind}_{'surface' if outdoor else 'cave'}", "window": f"{W}x{H}", "gui_scale": "",
            "texture_version": version, "fov": round(fov, 1)}
    return img, boxes, meta
