//! Minetest's first-person camera: world points to window pixels, and the boxes of the nodes the
//! probe saw. This is what makes the game label its own frames.
//!
//! Conventions (Minetest 5.6): yaw 0 looks along +Z and turning right lowers the yaw; pitch > 0
//! looks down; the look direction is (-sin yaw cos pitch, -sin pitch, cos yaw cos pitch) and the
//! camera's right is (cos yaw, 0, sin yaw). The `fov` setting is the vertical field of view,
//! widened by sqrt(1.6 / aspect) (at most 1.4x) on windows narrower than 16:10 (camera.cpp).
//!
//! The Minecraft client's camera ([`CameraModel::Minecraft`], a scan from the tests/mcweb server)
//! has the same look direction for the same yaw and pitch (Notchian degrees: yaw 0 looks along
//! +Z, 90 along -X), but its axes are right-handed, so the camera's right is the other way,
//! (-cos yaw, 0, -sin yaw); its `fov` is three.js's vertical field of view, never widened.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

/// A pinhole camera at the player's eye.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    eye: [f64; 3],
    forward: [f64; 3],
    right: [f64; 3],
    up: [f64; 3],
    /// Pixels per unit of (lateral / depth).
    focal_px: f64,
    width: f64,
    height: f64,
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Closer than this (in nodes) a point is behind the near plane.
const NEAR: f64 = 0.05;

/// Whose camera a scan was taken with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CameraModel {
    #[default]
    Minetest,
    Minecraft,
}

impl Camera {
    /// Minetest's camera.
    pub fn new(
        eye: [f64; 3],
        yaw_deg: f64,
        pitch_deg: f64,
        fov_deg: f64,
        width: u32,
        height: u32,
    ) -> Camera {
        Camera::of_model(
            CameraModel::Minetest,
            eye,
            yaw_deg,
            pitch_deg,
            fov_deg,
            width,
            height,
        )
    }

    /// The camera a scan was taken from, at a window of `width` x `height`.
    pub fn of_scan(scan: &Scan, fov_deg: f64, width: u32, height: u32) -> Camera {
        Camera::of_model(
            scan.camera,
            scan.eye.as_array(),
            scan.yaw_deg,
            scan.pitch_deg,
            fov_deg,
            width,
            height,
        )
    }

    pub fn of_model(
        model: CameraModel,
        eye: [f64; 3],
        yaw_deg: f64,
        pitch_deg: f64,
        fov_deg: f64,
        width: u32,
        height: u32,
    ) -> Camera {
        let (yaw, pitch) = (yaw_deg.to_radians(), pitch_deg.to_radians());
        let forward = [
            -yaw.sin() * pitch.cos(),
            -pitch.sin(),
            yaw.cos() * pitch.cos(),
        ];
        // Up is the same in both games: only which way "right" points differs.
        let left_handed_right = [yaw.cos(), 0.0, yaw.sin()];
        let up = cross(forward, left_handed_right);
        let (w, h) = (f64::from(width), f64::from(height));
        let aspect = w / h;
        let (right, fov_y) = match model {
            CameraModel::Minetest => (
                left_handed_right,
                fov_deg.to_radians() * (1.6 / aspect).sqrt().clamp(1.0, 1.4),
            ),
            CameraModel::Minecraft => (left_handed_right.map(|c| -c), fov_deg.to_radians()),
        };
        Camera {
            eye,
            forward,
            right,
            up,
            focal_px: (h / 2.0) / (fov_y / 2.0).tan(),
            width: w,
            height: h,
        }
    }

    /// The window pixel of a world point, or None when it is behind the camera.
    pub fn project(&self, p: [f64; 3]) -> Option<(f64, f64)> {
        let d = [p[0] - self.eye[0], p[1] - self.eye[1], p[2] - self.eye[2]];
        let z = dot(d, self.forward);
        if z < NEAR {
            return None;
        }
        let x = dot(d, self.right) / z;
        let y = dot(d, self.up) / z;
        Some((
            self.width / 2.0 + x * self.focal_px,
            self.height / 2.0 - y * self.focal_px,
        ))
    }
}

/// What the probe's `scan` command returns.
#[derive(Debug, Clone, Deserialize)]
pub struct Scan {
    /// Whose camera (absent: Minetest's probe).
    #[serde(default)]
    pub camera: CameraModel,
    pub eye: super::minetest::Vec3,
    pub yaw_deg: f64,
    pub pitch_deg: f64,
    /// Cells per face edge.
    pub grid: f64,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub nodes: Vec<ScannedNode>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ScannedNode>, D::Error> {
    Ok(Option::<Vec<ScannedNode>>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScannedNode {
    pub class: String,
    pub name: String,
    pub pos: super::minetest::Vec3,
    /// Visible face cells: [x, y, z, face] with the cell's centre on face 1..6 (+x -x +y -y +z -z).
    pub cells: Vec<[f64; 4]>,
}

/// A labelled box in window pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct PixelBox {
    pub class: String,
    pub x1: f64,
    pub y1: f64,
    pub x2: f64,
    pub y2: f64,
}

impl PixelBox {
    pub fn width(&self) -> f64 {
        self.x2 - self.x1
    }
    pub fn height(&self) -> f64 {
        self.y2 - self.y1
    }
    fn union(&mut self, o: &PixelBox) {
        self.x1 = self.x1.min(o.x1);
        self.y1 = self.y1.min(o.y1);
        self.x2 = self.x2.max(o.x2);
        self.y2 = self.y2.max(o.y2);
    }
}

/// The box of the visible part of one node: the union of its visible cells' projected corners,
/// clipped to the window. None when nothing of it projects into the window.
pub fn node_box(camera: &Camera, node: &ScannedNode, grid: f64) -> Option<PixelBox> {
    let half = 0.5 / grid.max(1.0);
    let mut b: Option<PixelBox> = None;
    for cell in &node.cells {
        let axis = match cell[3] as i64 {
            1 | 2 => 0,
            3 | 4 => 1,
            _ => 2,
        };
        let (a, c) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        for (da, dc) in [(-half, -half), (-half, half), (half, -half), (half, half)] {
            let mut p = [cell[0], cell[1], cell[2]];
            p[a] += da;
            p[c] += dc;
            let Some((x, y)) = camera.project(p) else {
                continue;
            };
            let corner = PixelBox {
                class: node.class.clone(),
                x1: x,
                y1: y,
                x2: x,
                y2: y,
            };
            match &mut b {
                Some(b) => b.union(&corner),
                None => b = Some(corner),
            }
        }
    }
    let mut b = b?;
    b.x1 = b.x1.max(0.0);
    b.y1 = b.y1.max(0.0);
    b.x2 = b.x2.min(camera.width);
    b.y2 = b.y2.min(camera.height);
    (b.x2 > b.x1 && b.y2 > b.y1).then_some(b)
}

/// How the labeller joins node boxes into object boxes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Merge<'a> {
    /// Classes whose vertically stacked nodes are one object (a trunk).
    pub columns: &'a [String],
    /// Classes whose touching nodes (the 26 around a node) are one object (a stone face): a
    /// single node of a uniform rock texture has no visible edge, a rock face has.
    pub regions: &'a [String],
    /// A screen panel `[x1, y1, x2, y2]` in the middle of the view that hides the world (the
    /// open inventory): each node keeps the part of its box beside the panel before nodes are
    /// joined, and region nodes on different sides of the panel are never joined, so no box
    /// spans what the panel hides.
    pub hidden: Option<[f64; 4]>,
    /// A panel along the window's edge drawn over the world on every frame (the HUD hotbar):
    /// what is behind it is cut off nodes and joined boxes, but it splits no region (a panel
    /// splits by which side of it a node's centre lies, which for a strip along the bottom
    /// edge would cut every wide stone face into three bands).
    pub edge: Option<[f64; 4]>,
    /// More screen areas that hide the world on this frame, cut off as `edge` is (the Minecraft
    /// client's item list and search box beside and above its open inventory).
    pub covered: &'a [[f64; 4]],
}

impl Merge<'_> {
    /// The panels that hide the world on this frame.
    fn panels(&self) -> impl Iterator<Item = [f64; 4]> + '_ {
        self.hidden
            .into_iter()
            .chain(self.edge)
            .chain(self.covered.iter().copied())
    }

    /// What is left of a box beside every panel in turn (see [`outside_panel`]).
    fn visible_part(&self, b: &PixelBox) -> Option<PixelBox> {
        self.panels()
            .try_fold(b.clone(), |b, panel| outside_panel(&b, panel))
    }
}

/// Which side of the panel a box beside it lies on (0 when there is no panel).
fn panel_side(b: &PixelBox, panel: Option<[f64; 4]>) -> u8 {
    let Some([px1, py1, px2, _]) = panel else {
        return 0;
    };
    let cx = (b.x1 + b.x2) / 2.0;
    let cy = (b.y1 + b.y2) / 2.0;
    if cx < px1 {
        1
    } else if cx > px2 {
        2
    } else if cy < py1 {
        3
    } else {
        4
    }
}

/// Boxes of every scanned node: nodes of `merge.columns` classes stacked in one column (same x
/// and z, touching in y) become one box (a trunk, not its nodes), touching nodes of
/// `merge.regions` classes one box per region; boxes narrower or lower than `min_px` are
/// dropped.
pub fn scan_boxes(camera: &Camera, scan: &Scan, merge: Merge<'_>, min_px: f64) -> Vec<PixelBox> {
    let mut singles = Vec::new();
    // (class, x, z) -> [(y, box)]
    let mut columns: BTreeMap<(String, i64, i64), Vec<(i64, PixelBox)>> = BTreeMap::new();
    // ((class, side of the panel), cell, box)
    let mut region_nodes: Vec<((String, u8), [i64; 3], PixelBox)> = Vec::new();
    for node in &scan.nodes {
        let Some(b) = node_box(camera, node, scan.grid) else {
            continue;
        };
        let Some(b) = merge.visible_part(&b) else {
            continue;
        };
        let cell = [
            node.pos.x.round() as i64,
            node.pos.y.round() as i64,
            node.pos.z.round() as i64,
        ];
        if merge.regions.contains(&node.class) {
            let side = panel_side(&b, merge.hidden);
            region_nodes.push(((node.class.clone(), side), cell, b));
        } else if merge.columns.contains(&node.class) {
            let key = (node.class.clone(), cell[0], cell[2]);
            columns.entry(key).or_default().push((cell[1], b));
        } else {
            singles.push(b);
        }
    }
    for (_, mut stack) in columns {
        stack.sort_by_key(|(y, _)| *y);
        let mut run: Option<(i64, PixelBox)> = None;
        for (y, b) in stack {
            run = Some(match run {
                Some((last, mut acc)) if y == last + 1 => {
                    acc.union(&b);
                    (y, acc)
                }
                Some((_, done)) => {
                    singles.push(done);
                    (y, b)
                }
                None => (y, b),
            });
        }
        if let Some((_, done)) = run {
            singles.push(done);
        }
    }
    singles.extend(merge_touching(region_nodes));
    // A joined box can reach across a panel again (a trunk column beside the open inventory, a
    // stone face around the hotbar's corner): keep its largest visible strip.
    singles
        .iter()
        .filter_map(|b| merge.visible_part(b))
        .filter(|b| b.width() >= min_px && b.height() >= min_px)
        .collect()
}

/// The part of a world box that a screen panel leaves visible: the largest of the strips
/// left, right, above and below the panel.
pub fn outside_panel(b: &PixelBox, panel: [f64; 4]) -> Option<PixelBox> {
    let [px1, py1, px2, py2] = panel;
    let overlaps = b.x1 < px2 && b.x2 > px1 && b.y1 < py2 && b.y2 > py1;
    if !overlaps {
        return Some(b.clone());
    }
    let strips = [
        (b.x1, b.y1, b.x2.min(px1), b.y2),
        (b.x1.max(px2), b.y1, b.x2, b.y2),
        (b.x1, b.y1, b.x2, b.y2.min(py1)),
        (b.x1, b.y1.max(py2), b.x2, b.y2),
    ];
    strips
        .iter()
        .filter(|(x1, y1, x2, y2)| x2 > x1 && y2 > y1)
        .max_by(|a, c| ((a.2 - a.0) * (a.3 - a.1)).total_cmp(&((c.2 - c.0) * (c.3 - c.1))))
        .map(|&(x1, y1, x2, y2)| PixelBox {
            class: b.class.clone(),
            x1,
            y1,
            x2,
            y2,
        })
}

/// One box per connected group of nodes with the same key (26-neighbourhood), by union-find.
fn merge_touching<K: Eq + std::hash::Hash>(nodes: Vec<(K, [i64; 3], PixelBox)>) -> Vec<PixelBox> {
    let index: HashMap<(&K, [i64; 3]), usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, (key, cell, _))| ((key, *cell), i))
        .collect();
    let mut parent: Vec<usize> = (0..nodes.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, (key, cell, _)) in nodes.iter().enumerate() {
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let next = [cell[0] + dx, cell[1] + dy, cell[2] + dz];
                    if let Some(&j) = index.get(&(key, next)) {
                        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                        parent[a] = b;
                    }
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, PixelBox> = BTreeMap::new();
    for (i, (_, _, b)) in nodes.iter().enumerate() {
        let r = root(&mut parent, i);
        groups
            .entry(r)
            .and_modify(|acc| acc.union(b))
            .or_insert_with(|| b.clone());
    }
    groups.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testworld::minetest::Vec3;

    fn cam(yaw: f64, pitch: f64) -> Camera {
        Camera::new([0.0, 0.0, 0.0], yaw, pitch, 72.0, 854, 480)
    }

    #[test]
    fn the_look_direction_projects_to_the_centre() {
        let c = cam(0.0, 0.0);
        let (x, y) = c.project([0.0, 0.0, 5.0]).expect("in front");
        assert!((x - 427.0).abs() < 1e-9 && (y - 240.0).abs() < 1e-9);
        assert!(c.project([0.0, 0.0, -5.0]).is_none(), "behind");
    }

    #[test]
    fn the_minecraft_camera_has_east_on_the_left_when_facing_south() {
        let mc =
            |yaw| Camera::of_model(CameraModel::Minecraft, [0.0; 3], yaw, 0.0, 75.0, 1280, 720);
        // Facing south (+Z), east (+X) is on the left; facing west (-X), north (-Z) is on the right.
        let (x, _) = mc(0.0).project([1.0, 0.0, 5.0]).expect("in front");
        assert!(x < 640.0, "{x}");
        let (x, _) = mc(90.0).project([-5.0, 0.0, -1.0]).expect("in front");
        assert!(x > 640.0, "{x}");
        // Up is up, and the vertical field of view is 75 degrees at any aspect (no widening).
        let top = 37.5f64.to_radians().tan() * 5.0;
        let (_, y) = mc(0.0).project([0.0, top, 5.0]).expect("in front");
        assert!(y.abs() < 1e-6, "{y}");
        let narrow = Camera::of_model(CameraModel::Minecraft, [0.0; 3], 0.0, 0.0, 75.0, 600, 720);
        let (_, y) = narrow.project([0.0, top, 5.0]).expect("in front");
        assert!(y.abs() < 1e-6, "{y}");
    }

    #[test]
    fn the_vertical_field_of_view_spans_the_window_height() {
        // At 854x480 (wider than 16:10) the fov setting is the vertical angle: a point 36 degrees
        // above the look direction sits on the top edge.
        let c = cam(0.0, 0.0);
        let (_, y) = c
            .project([0.0, 36f64.to_radians().tan() * 10.0, 10.0])
            .expect("in front");
        assert!(y.abs() < 1e-6, "{y}");
    }

    #[test]
    fn turning_right_lowers_the_yaw_and_looking_down_is_positive_pitch() {
        // Yaw -90 looks along +X; a point ahead and a bit to +Z is on the left half.
        let c = cam(-90.0, 0.0);
        let (x, _) = c.project([5.0, 0.0, 1.0]).expect("in front");
        assert!(x < 427.0, "{x}");
        // Looking down 30 degrees, a point level with the eye is above the centre.
        let c = cam(0.0, 30.0);
        let (_, y) = c.project([0.0, 0.0, 5.0]).expect("in front");
        assert!(y < 240.0, "{y}");
    }

    /// A scan from the origin looking along +z, one ray cell per face.
    fn scan_of(nodes: Vec<ScannedNode>) -> Scan {
        Scan {
            camera: CameraModel::Minetest,
            eye: Vec3 {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            },
            yaw_deg: 0.0,
            pitch_deg: 0.0,
            grid: 1.0,
            nodes,
        }
    }

    fn node(class: &str, x: f64, y: f64, z: f64) -> ScannedNode {
        // The -z face (6) of a node straight ahead, one cell covering the whole face.
        ScannedNode {
            class: class.into(),
            name: format!("default:{class}"),
            pos: Vec3 { x, y, z },
            cells: vec![[x, y, z - 0.5, 6.0]],
        }
    }

    #[test]
    fn a_node_face_ahead_becomes_a_centred_box_of_its_projected_size() {
        let c = cam(0.0, 0.0);
        let b = node_box(&c, &node("stone", 0.0, 0.0, 4.5), 1.0).expect("box");
        let focal = 240.0 / 36f64.to_radians().tan();
        assert!((b.width() - focal / 4.0).abs() < 1e-6, "{b:?}");
        assert!(((b.x1 + b.x2) / 2.0 - 427.0).abs() < 1e-6);
    }

    #[test]
    fn stacked_trunk_nodes_merge_into_one_box_and_tiny_boxes_go() {
        let c = cam(0.0, 0.0);
        let scan = scan_of(vec![
            node("tree", 0.0, -1.0, 4.5),
            node("tree", 0.0, 0.0, 4.5),
            node("tree", 0.0, 2.0, 4.5), // a gap: its own box
            node("stone", 2.0, 0.0, 4.5),
            node("stone", 0.0, 0.0, 400.0), // 1 px far away
        ]);
        let columns = ["tree".to_string()];
        let merge = Merge {
            columns: &columns,
            ..Merge::default()
        };
        let boxes = scan_boxes(&c, &scan, merge, 3.0);
        let trees: Vec<_> = boxes.iter().filter(|b| b.class == "tree").collect();
        assert_eq!(trees.len(), 2, "{boxes:?}");
        let tall = trees
            .iter()
            .map(|b| b.height())
            .fold(0.0f64, |a, h| a.max(h));
        let wide = trees[0].width();
        assert!(
            (tall / wide - 2.0).abs() < 1e-6,
            "two nodes high: {tall} / {wide}"
        );
        assert_eq!(boxes.iter().filter(|b| b.class == "stone").count(), 1);
    }

    #[test]
    fn touching_region_nodes_become_one_box() {
        let c = cam(0.0, 0.0);
        let scan = scan_of(vec![
            node("stone", 0.0, 0.0, 5.0),
            node("stone", 1.0, 0.0, 5.0),
            node("stone", 2.0, -1.0, 6.0), // touches the second one diagonally
            node("stone", -3.0, 0.0, 5.0), // apart: its own box
            node("coal_ore", -1.0, 0.0, 5.0), // another class is never merged in
        ]);
        let regions = ["stone".to_string()];
        let merge = Merge {
            regions: &regions,
            ..Merge::default()
        };
        let boxes = scan_boxes(&c, &scan, merge, 3.0);
        let stones: Vec<_> = boxes.iter().filter(|b| b.class == "stone").collect();
        assert_eq!(stones.len(), 2, "{boxes:?}");
        let single = node_box(&c, &node("stone", 0.0, 0.0, 5.0), 1.0).expect("box");
        let widest = stones.iter().map(|b| b.width()).fold(0.0f64, f64::max);
        assert!(
            widest > 2.5 * single.width(),
            "{widest} vs {}",
            single.width()
        );
        assert_eq!(boxes.iter().filter(|b| b.class == "coal_ore").count(), 1);
    }

    #[test]
    fn a_region_is_not_joined_across_a_panel() {
        let c = cam(0.0, 0.0);
        let scan = scan_of(
            (-6..=6)
                .map(|x| node("stone", f64::from(x), 0.0, 5.0))
                .collect(),
        );
        let regions = ["stone".to_string()];
        let open = Merge {
            regions: &regions,
            hidden: Some([330.0, 0.0, 520.0, 480.0]),
            ..Merge::default()
        };
        let boxes = scan_boxes(&c, &scan, open, 3.0);
        assert_eq!(boxes.len(), 2, "one region each side: {boxes:?}");
        assert!(
            boxes.iter().all(|b| b.x2 <= 330.0 || b.x1 >= 520.0),
            "{boxes:?}"
        );
        let closed = Merge {
            regions: &regions,
            ..Merge::default()
        };
        assert_eq!(scan_boxes(&c, &scan, closed, 3.0).len(), 1);
    }

    #[test]
    fn a_trunk_behind_the_hotbar_keeps_only_what_shows_above_it() {
        // Looking down at a trunk: its lower nodes fall behind a hotbar-like panel at the bottom.
        let c = cam(0.0, 30.0);
        let scan = scan_of(
            (-8..=1)
                .map(|y| node("tree", 0.0, f64::from(y), 5.0))
                .collect(),
        );
        let regions = ["tree".to_string()];
        let bare = Merge {
            regions: &regions,
            ..Merge::default()
        };
        let whole = scan_boxes(&c, &scan, bare, 3.0);
        assert_eq!(whole.len(), 1, "{whole:?}");
        let bar = [200.0, 400.0, 660.0, 480.0];
        assert!(whole[0].y2 > bar[1], "the trunk reaches the bar: {whole:?}");
        let seen = scan_boxes(
            &c,
            &scan,
            Merge {
                regions: &regions,
                edge: Some(bar),
                ..Merge::default()
            },
            3.0,
        );
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].y2 <= bar[1], "{seen:?}");
        assert_eq!(seen[0].y1, whole[0].y1);
        // A node wholly behind the bar gets no box at all.
        let low = scan_of(vec![node("tree", 0.0, -8.0, 5.0)]);
        let low_box = &scan_boxes(&c, &low, bare, 3.0)[0];
        assert!(low_box.y1 >= bar[1] && low_box.x1 >= bar[0] && low_box.x2 <= bar[2]);
        let merge = Merge {
            regions: &regions,
            edge: Some(bar),
            ..Merge::default()
        };
        assert!(scan_boxes(&c, &low, merge, 3.0).is_empty());
    }

    #[test]
    fn covered_areas_cut_a_trunk_as_the_panel_does_and_hide_it_wholly_behind_them() {
        // A trunk column seen straight ahead; an open inventory's side list covers its right
        // part, a search box its top.
        let c = cam(0.0, 0.0);
        let scan = scan_of(
            (-2..=3)
                .map(|y| node("tree", 0.5, f64::from(y), 6.0))
                .collect(),
        );
        let columns = ["tree".to_string()];
        let bare = Merge {
            columns: &columns,
            ..Merge::default()
        };
        let whole = scan_boxes(&c, &scan, bare, 3.0);
        assert_eq!(whole.len(), 1, "{whole:?}");
        let w = &whole[0];
        let mid_x = (w.x1 + w.x2) / 2.0;
        let list = [mid_x, 0.0, 1000.0, 480.0];
        let search = [0.0, 0.0, 1000.0, w.y1 + 20.0];
        let covered = [list, search];
        let cut = scan_boxes(
            &c,
            &scan,
            Merge {
                columns: &columns,
                covered: &covered,
                ..Merge::default()
            },
            3.0,
        );
        assert_eq!(cut.len(), 1, "{cut:?}");
        assert!(
            cut[0].x2 <= mid_x + 1e-6 && cut[0].x1 == w.x1,
            "{cut:?} of {w:?}"
        );
        assert!(
            cut[0].y1 >= w.y1 + 20.0 - 1e-6 && cut[0].y2 == w.y2,
            "{cut:?} of {w:?}"
        );
        let all = [[0.0, 0.0, 1000.0, 1000.0]];
        let gone = Merge {
            columns: &columns,
            covered: &all,
            ..Merge::default()
        };
        assert!(scan_boxes(&c, &scan, gone, 3.0).is_empty());
    }

    #[test]
    fn a_stone_face_across_the_view_stays_one_box_above_the_hotbar() {
        // Looking down at a wall of stone filling the lower view, across the hotbar's width.
        let c = cam(0.0, 30.0);
        let scan = scan_of(
            (-12..=12)
                .flat_map(|x| {
                    (-8..=-2).map(move |y| node("stone", f64::from(x), f64::from(y), 5.0))
                })
                .collect(),
        );
        let regions = ["stone".to_string()];
        let bar = [193.0, 414.0, 661.0, 480.0];
        let merge = Merge {
            regions: &regions,
            edge: Some(bar),
            ..Merge::default()
        };
        let boxes = scan_boxes(&c, &scan, merge, 3.0);
        assert_eq!(
            boxes.len(),
            1,
            "one face, not bands beside the bar: {boxes:?}"
        );
        let b = &boxes[0];
        assert!(b.x1 < bar[0] && b.x2 > bar[2], "{b:?}");
        assert!(b.y2 <= bar[1], "{b:?}");
        // The open inventory in the middle does split it: no box spans what it hides.
        let split = Merge {
            hidden: Some([281.0, 60.0, 572.0, 397.0]),
            ..merge
        };
        let boxes = scan_boxes(&c, &scan, split, 3.0);
        assert!(boxes.len() > 1, "{boxes:?}");
        assert!(
            boxes
                .iter()
                .all(|b| b.x2 <= 281.0 || b.x1 >= 572.0 || b.y2 <= 60.0 || b.y1 >= 397.0),
            "{boxes:?}"
        );
    }

    #[test]
    fn touching_columns_are_one_box_as_a_region_and_one_each_as_columns() {
        let c = cam(0.0, 0.0);
        let scan = scan_of(
            [(0.0, 5.0), (1.0, 5.0), (0.0, 6.0), (1.0, 6.0)]
                .iter()
                .flat_map(|&(x, z)| (0..3).map(move |y| node("tree", x, f64::from(y), z)))
                .collect(),
        );
        let names = ["tree".to_string()];
        let as_region = Merge {
            regions: &names,
            ..Merge::default()
        };
        let as_columns = Merge {
            columns: &names,
            ..Merge::default()
        };
        assert_eq!(scan_boxes(&c, &scan, as_region, 3.0).len(), 1);
        assert_eq!(scan_boxes(&c, &scan, as_columns, 3.0).len(), 4);
    }

    #[test]
    fn boxes_under_the_panel_keep_their_visible_strip() {
        let panel = [100.0, 100.0, 200.0, 200.0];
        let b = |x1, y1, x2, y2| PixelBox {
            class: "tree".into(),
            x1,
            y1,
            x2,
            y2,
        };
        assert!(outside_panel(&b(120.0, 120.0, 180.0, 180.0), panel).is_none());
        let strip = outside_panel(&b(60.0, 120.0, 150.0, 180.0), panel).expect("left strip");
        assert_eq!((strip.x1, strip.x2), (60.0, 100.0));
        let away = b(0.0, 0.0, 50.0, 50.0);
        assert_eq!(outside_panel(&away, panel), Some(away));
    }

    #[test]
    fn boxes_are_clipped_to_the_window() {
        let c = cam(0.0, 0.0);
        // Close and to the right: the face reaches past the right edge.
        let b = node_box(&c, &node("stone", 1.4, 0.0, 1.6), 1.0).expect("box");
        assert_eq!(b.x2, 854.0);
        assert!(b.x1 < 854.0);
    }
}
