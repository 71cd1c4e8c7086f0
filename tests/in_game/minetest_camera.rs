//! The labeller's camera model against the real game's rendering: a node placed in the sky must
//! be drawn inside the box the projection gives it, with sky all around the box.

use crate::support;

use std::time::Duration;

use crate::support::MinetestGame;
use serde_json::json;
use vistawise::testworld::Probe;
use vistawise::testworld::{Camera, Merge, Scan, scan_boxes};

fn mean_rgb(img: &image::RgbImage, x1: u32, y1: u32, x2: u32, y2: u32) -> [f64; 3] {
    let mut sum = [0.0; 3];
    let mut n: f64 = 0.0;
    for y in y1..y2 {
        for x in x1..x2 {
            let p = img.get_pixel(x, y);
            for c in 0..3 {
                sum[c] += f64::from(p[c]);
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n.max(1.0))
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The game window's picture now.
fn screenshot(display: &str) -> image::RgbImage {
    use vistawise::capture::{Transport, WindowCapture};
    let id = support::find_window(display, "Minetest").expect("the Minetest window");
    WindowCapture::open_on(Some(display), id, Transport::Auto)
        .and_then(|mut c| c.grab())
        .expect("capture")
        .0
}

/// The field of view tests/minetest/gameenv.sh gives the game.
const HARNESS_FOV: f64 = 72.0;

#[test]
fn a_node_in_the_sky_is_drawn_inside_its_projected_box() {
    let _game = support::one_game();
    let game = MinetestGame::start(2024);
    let mut probe = Probe::open(&game.probe).expect("probe");
    // Stand on a one-node pillar high above the trees, so that everything near the view is sky.
    let start = probe.fresh_state(Duration::from_secs(5)).expect("state");
    let (px, pz) = (start.pos.x.round(), start.pos.z.round());
    // The probe emerges the pillar's block before setting it; a client that has not yet drawn
    // the block may still drop the player through it, so the climb is tried a few times.
    let mut state = start;
    for _ in 0..3 {
        probe
            .batch(
                vec![
                    json!({"op": "set_node", "pos": {"x": px, "y": 59, "z": pz}, "name": "default:stone"}),
                    json!({"op": "tp", "pos": {"x": px, "y": 59.6, "z": pz}}),
                ],
                Duration::from_secs(30),
            )
            .expect("pillar");
        std::thread::sleep(Duration::from_millis(1500));
        state = probe.fresh_state(Duration::from_secs(5)).expect("state");
        if (state.pos.y - 59.5).abs() < 0.1 {
            break;
        }
    }
    assert!(
        (state.pos.y - 59.5).abs() < 0.1,
        "the player is not on the pillar: {:?}",
        state.pos
    );
    // Look 25 degrees up at several yaws, a node 6 nodes out along the view.
    for (k, yaw) in [0.0f64, 70.0, 200.0].into_iter().enumerate() {
        let pitch = -25.0f64;
        let (yr, pr) = (yaw.to_radians(), pitch.to_radians());
        let e = state.eye;
        let dir = [-yr.sin() * pr.cos(), -pr.sin(), yr.cos() * pr.cos()];
        // Off the look direction a little, so the box is not centred by construction.
        let pos = json!({
            "x": (e.x + dir[0] * 6.0 + 1.0).round(),
            "y": (e.y + dir[1] * 6.0).round(),
            "z": (e.z + dir[2] * 6.0).round(),
        });
        probe
            .batch(
                vec![
                    json!({"op": "clear_inv"}),
                    json!({"op": "look", "yaw_deg": yaw, "pitch_deg": pitch}),
                    json!({"op": "set_node", "pos": pos, "name": "default:stone_with_coal"}),
                ],
                Duration::from_secs(10),
            )
            .expect("set up");
        std::thread::sleep(Duration::from_millis(1200));
        let image = screenshot(&game.display);
        let scan: Scan = serde_json::from_value(
            probe
                .send(
                    json!({"op": "scan", "names": {"coal_ore": ["default:stone_with_coal"]},
                             "radius": 12, "grid": 3}),
                )
                .expect("scan"),
        )
        .expect("scan form");
        let (w, h) = image.dimensions();
        let camera = Camera::of_scan(&scan, HARNESS_FOV, w, h);
        let boxes = scan_boxes(&camera, &scan, Merge::default(), 4.0);
        assert_eq!(
            boxes.len(),
            1,
            "view {k}: one coal node expected at {pos} from eye {:?} (scan eye {:?}, {} nodes): {boxes:?}",
            state.eye,
            scan.eye,
            scan.nodes.len()
        );
        let b = &boxes[0];
        assert!(b.width() > 20.0 && b.width() < 200.0, "view {k}: {b:?}");
        let (x1, y1, x2, y2) = (b.x1 as u32, b.y1 as u32, b.x2 as u32, b.y2 as u32);
        // Inside: the node's dark stone; a ring 4-10 px outside the box: sky.
        let inside = mean_rgb(&image, x1 + 3, y1 + 3, x2 - 3, y2 - 3);
        let ring = [
            mean_rgb(&image, x1, y1.saturating_sub(10), x2, y1.saturating_sub(4)),
            mean_rgb(&image, x1, (y2 + 4).min(h), x2, (y2 + 10).min(h)),
            mean_rgb(&image, x1.saturating_sub(10), y1, x1.saturating_sub(4), y2),
            mean_rgb(&image, (x2 + 4).min(w), y1, (x2 + 10).min(w), y2),
        ];
        let sky = ring[0];
        for (side, c) in ring.iter().enumerate() {
            assert!(
                distance(*c, sky) < 25.0 && c[2] > c[0],
                "view {k}: side {side} of the box is not sky: {c:?} (top {sky:?}); {}",
                game.log_tail()
            );
        }
        assert!(
            distance(inside, sky) > 80.0,
            "view {k}: the box holds sky, not the node: {inside:?} vs {sky:?}"
        );
        probe
            .send(json!({"op": "set_node", "pos": pos, "name": "air"}))
            .expect("remove");
    }

    // A class may be scanned farther than the others (`radii`, the labeller's class_radius):
    // a node 30 nodes out is left out at radius 12 and found, and drawn, at its class's 35.
    let (yaw, pitch) = (0.0f64, -25.0f64);
    let (yr, pr) = (yaw.to_radians(), pitch.to_radians());
    let e = state.eye;
    let dir = [-yr.sin() * pr.cos(), -pr.sin(), yr.cos() * pr.cos()];
    let far = json!({
        "x": (e.x + dir[0] * 30.0).round(),
        "y": (e.y + dir[1] * 30.0).round(),
        "z": (e.z + dir[2] * 30.0).round(),
    });
    probe
        .batch(
            vec![
                json!({"op": "look", "yaw_deg": yaw, "pitch_deg": pitch}),
                json!({"op": "set_node", "pos": far, "name": "default:stone_with_coal"}),
            ],
            Duration::from_secs(10),
        )
        .expect("far node");
    std::thread::sleep(Duration::from_millis(1200));
    let names = json!({"coal_ore": ["default:stone_with_coal"]});
    let near_only: Scan = serde_json::from_value(
        probe
            .send(json!({"op": "scan", "names": names, "radius": 12, "grid": 3}))
            .expect("scan"),
    )
    .expect("scan form");
    assert!(near_only.nodes.is_empty(), "{:?}", near_only.nodes);
    let with_radii: Scan = serde_json::from_value(
        probe
            .send(json!({"op": "scan", "names": names, "radius": 12,
                         "radii": {"coal_ore": 35}, "grid": 3}))
            .expect("scan"),
    )
    .expect("scan form");
    assert_eq!(with_radii.nodes.len(), 1, "{:?}", with_radii.nodes);
    let image = screenshot(&game.display);
    let camera = Camera::of_scan(&with_radii, HARNESS_FOV, image.width(), image.height());
    let boxes = scan_boxes(&camera, &with_radii, Merge::default(), 4.0);
    assert_eq!(boxes.len(), 1, "{boxes:?}");
    let b = &boxes[0];
    let (cx, cy) = (((b.x1 + b.x2) / 2.0) as u32, ((b.y1 + b.y2) / 2.0) as u32);
    let centre = mean_rgb(&image, cx - 2, cy - 2, cx + 2, cy + 2);
    let sky = mean_rgb(
        &image,
        b.x1 as u32,
        (b.y1 as u32).saturating_sub(12),
        b.x2 as u32,
        (b.y1 as u32).saturating_sub(6),
    );
    assert!(
        distance(centre, sky) > 60.0,
        "the far node's box holds sky: {centre:?} vs {sky:?} ({b:?})"
    );
}
