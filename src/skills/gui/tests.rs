use super::*;

fn minecraft() -> GuiGeometry {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minecraft.toml");
    GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn at(geo: &GuiGeometry, w: u32, h: u32, scale: GuiScale, loc: &str) -> (f32, f32) {
    geo.layout(w, h, scale)
        .slot_center(loc)
        .unwrap_or_else(|e| panic!("{e}"))
}

const AUTO: GuiScale = GuiScale::Auto;
const S2: GuiScale = GuiScale::Fixed(2);
const S3: GuiScale = GuiScale::Fixed(3);
const S4: GuiScale = GuiScale::Fixed(4);

#[test]
fn the_screens_whose_marker_the_frame_shows_are_listed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minecraft-web.toml");
    let geo = GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let layout = geo.layout(1280, 720, AUTO);
    // The crafting table's grey grid where the inventory draws its black player preview, the
    // panels' light background (#C6C6C6) left of the slots: panel (125, 37) GUI px at scale 3,
    // the background from (4, 20) to (7, 70).
    let mut frame = image::RgbImage::from_pixel(1280, 720, image::Rgb([139, 139, 139]));
    let paint = |frame: &mut image::RgbImage, (x0, y0, x1, y1): (u32, u32, u32, u32), v: u8| {
        for y in (37 + y0) * 3..(37 + y1) * 3 {
            for x in (125 + x0) * 3..(125 + x1) * 3 {
                frame.put_pixel(x, y, image::Rgb([v, v, v]));
            }
        }
    };
    // Without the panel's background around it the grid is a stone wall: no screen.
    assert!(layout.marked_screens(&frame).is_empty());
    paint(&mut frame, (4, 20, 7, 70), 198);
    assert_eq!(layout.marked_screens(&frame), ["crafting_table"]);
    // The preview box: from (26, 8) to (75, 78).
    paint(&mut frame, (26, 8, 75, 78), 0);
    assert_eq!(layout.marked_screens(&frame), ["inventory"]);
    // A dark frame (a shaft's floor looked straight down at) is black there too, and has no
    // panel: no screen (world 3112 took three such frames for the inventory).
    let dark = image::RgbImage::from_pixel(1280, 720, image::Rgb([30, 30, 30]));
    assert!(layout.marked_screens(&dark).is_empty());
    // A furnace's light background (#C6C6C6) there: the furnace; the sky's light blue: none.
    let light = image::RgbImage::from_pixel(1280, 720, image::Rgb([198, 198, 198]));
    assert_eq!(layout.marked_screens(&light), ["furnace"]);
    let sky = image::RgbImage::from_pixel(1280, 720, image::Rgb([173, 216, 230]));
    assert!(layout.marked_screens(&sky).is_empty());
    // The death screen's red tint, half over the sky and the grey grid, marks the death screen
    // (a tinted sky may pass for another screen's marker too: the death ends the session
    // first); none of the frames above does.
    let tint = |[r, g, b]: [u8; 3]| image::Rgb([r / 2 + 128, g / 2, b / 2]);
    for under in [[173, 216, 230], [139, 139, 139], [0, 0, 0], [255, 255, 255]] {
        let dead = image::RgbImage::from_pixel(1280, 720, tint(under));
        assert!(
            layout.marked_screens(&dead).contains(&"death".to_string()),
            "{under:?}"
        );
    }
    for alive in [&frame, &light, &sky] {
        assert!(!layout.marked_screens(alive).contains(&"death".to_string()));
    }
    // The vanilla profile has no marker.
    let vanilla = minecraft();
    assert!(
        vanilla
            .layout(1280, 720, AUTO)
            .marked_screens(&frame)
            .is_empty()
    );
}

/// A dirt wall against the face filled the death marker's area with pixels 40-60 redder than
/// green (world 3107 from nothing: the run ended as a death at full health). The tint rule
/// tells it from the death screen's red tint at every shade of the wall, and the same wall
/// under the tint still marks the death screen.
#[test]
fn a_dirt_wall_in_the_face_is_no_death_screen() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minecraft-web.toml");
    let geo = GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let layout = geo.layout(1280, 720, AUTO);
    // The dirt texture's tones as that frame showed them, in 4 x 4 px texels.
    let tones = [
        [212, 158, 114],
        [170, 122, 84],
        [137, 96, 66],
        [136, 93, 58],
    ];
    let wall = |shade: f32| {
        image::RgbImage::from_fn(1280, 720, |x, y| {
            let tone = tones[((x / 4 * 7 + y / 4 * 13) % 4) as usize];
            image::Rgb(tone.map(|c| (c as f32 * shade).min(255.0) as u8))
        })
    };
    let red_only = |frame: &image::RgbImage| {
        frame
            .pixels()
            .filter(|p| i32::from(p[0]) - i32::from(p[1].max(p[2])) >= 40)
            .count() as f32
            / frame.pixels().count() as f32
    };
    // The brightest shade is the frame's: the red rule alone took it for the death screen.
    assert!(red_only(&wall(1.0)) > 0.95);
    let tint = |[r, g, b]: [u8; 3]| image::Rgb([r / 2 + 128, g / 2, b / 2]);
    for shade in [0.6, 0.7, 0.8, 0.9, 1.0, 1.1] {
        let frame = wall(shade);
        assert!(
            !layout.marked_screens(&frame).contains(&"death".to_string()),
            "shade {shade}"
        );
        let dead = image::RgbImage::from_fn(1280, 720, |x, y| tint(frame.get_pixel(x, y).0));
        assert!(
            layout.marked_screens(&dead).contains(&"death".to_string()),
            "shade {shade} under the tint"
        );
    }
}

#[test]
fn a_tint_that_is_no_colour_at_an_opacity_is_refused_with_its_line() {
    for tint in ["[255, 0, 0, 1.0]", "[255, 0, 0, 0]", "[300, 0, 0, 0.5]"] {
        let text = format!(
            "[gui]\nslot_size = 16\npitch = 18\n[gui.screens.death]\nsize = [176, 166]\n\
             marker = {{ area = [0, 0, 10, 10], red = 40, tint = {tint}, min_fraction = 0.9 }}\n"
        );
        let err = GuiGeometry::parse(&text, Path::new("p.toml")).expect_err(tint);
        let msg = err.to_string();
        assert!(
            msg.contains("p.toml:6") && msg.contains("marker.tint"),
            "{tint}: {msg}"
        );
    }
}

#[test]
fn a_marker_outside_its_panel_is_refused_with_its_line() {
    let text = "[gui]\nslot_size = 16\npitch = 18\n[gui.screens.inv]\nsize = [176, 166]\n\
                marker = { area = [170, 0, 10, 10], luma = [0, 40], min_fraction = 0.8 }\n\
                [gui.screens.inv.regions]\nmain = { origin = [8, 84], columns = 9, rows = 3 }\n";
    let err = GuiGeometry::parse(text, Path::new("p.toml")).expect_err("outside");
    let msg = err.to_string();
    assert!(
        msg.contains("p.toml:6") && msg.contains("marker.area"),
        "{msg}"
    );
}

#[test]
fn a_screen_with_no_slots_is_there_for_its_marker_only() {
    let head = "[gui]\nslot_size = 16\npitch = 18\n[gui.screens.pause]\nsize = [176, 166]\n";
    let marked = format!(
        "{head}marker = {{ area = [10, 10, 20, 20], luma = [48, 56], min_fraction = 0.9 }}\n"
    );
    let geo = GuiGeometry::parse(&marked, Path::new("p.toml")).expect("marker only");
    assert!(geo.has_marker("pause"));
    assert!(geo.locations().is_empty());
    let err = GuiGeometry::parse(head, Path::new("p.toml")).expect_err("neither");
    assert!(err.to_string().contains("no slot regions defined"), "{err}");
}

#[test]
fn slots_list_every_location_with_its_screen_and_centre() {
    let geo = minecraft();
    let layout = geo.layout(1280, 720, S3);
    let all = layout.slots(None);
    let names: Vec<&str> = all.iter().map(|s| s.location.as_str()).collect();
    assert_eq!(names, geo.locations());
    for s in &all {
        assert_eq!(s.location.split('.').next(), Some(s.screen.as_str()));
        assert_eq!(Ok(s.centre), layout.slot_center(&s.location));
    }
    let furnace: Vec<String> = layout
        .slots(Some("furnace"))
        .into_iter()
        .map(|s| s.location)
        .filter(|l| !l.contains(".main.") && !l.contains(".hotbar."))
        .collect();
    assert_eq!(furnace, ["furnace.fuel", "furnace.input", "furnace.result"]);
    assert_eq!(layout.slots(Some("furnace")).len(), 3 + 27 + 9);
    assert!(layout.slots(Some("no_such_screen")).is_empty());
}

#[test]
fn scale_follows_the_game_rule() {
    // Auto: largest s with w / s >= 320 and h / s >= 240.
    assert_eq!(effective_scale(854, 480, AUTO), 2); // 854/3 = 284 < 320
    assert_eq!(effective_scale(1280, 720, AUTO), 3); // 720/4 = 180 < 240
    assert_eq!(effective_scale(1920, 1080, AUTO), 4); // 1080/5 = 216 < 240
    assert_eq!(effective_scale(2560, 1440, AUTO), 6); // 2560/7 = 365, 1440/7 = 205
    assert_eq!(effective_scale(3840, 2160, AUTO), 9); // no upper bound on auto
    assert_eq!(effective_scale(300, 200, AUTO), 1);
    assert_eq!(effective_scale(0, 0, AUTO), 1);
    assert_eq!(effective_scale(1920, 1080, GuiScale::Fixed(0)), 4); // 0 is "auto"
    // Fixed: taken when it fits, else clamped to what fits.
    assert_eq!(effective_scale(1920, 1080, S2), 2);
    assert_eq!(effective_scale(1920, 1080, S3), 3);
    assert_eq!(effective_scale(1920, 1080, GuiScale::Fixed(6)), 4);
    assert_eq!(effective_scale(1280, 720, S2), 2);
    assert_eq!(effective_scale(1280, 720, S4), 3);
    assert_eq!(effective_scale(854, 480, S3), 2);
    assert_eq!(effective_scale(854, 480, S4), 2);
    assert_eq!(effective_scale(854, 480, GuiScale::Fixed(1)), 1);
}

#[test]
fn the_web_clients_rule_is_its_option_unless_a_breakpoint_matches() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minecraft-web.toml");
    let geo = GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"));
    for (w, h, want) in [
        (1920, 1080, 3.0), // vanilla: 4
        (1280, 720, 3.0),
        (1279, 719, 3.0), // vanilla: 2
        (1024, 600, 3.0), // vanilla: 2
        (900, 600, 2.0),  // width <= 971
        (800, 380, 1.5),  // width <= 971, then height <= 390: the last wins
        (500, 300, 1.4),  // ... width <= 590 with height >= 240
        (500, 200, 1.0),  // width <= 590, but not height >= 240
    ] {
        assert_eq!(geo.rule_scale(w, h, AUTO), want, "{w}x{h}");
    }
    // A fixed option is the client's guiScale: 2 where no breakpoint matches.
    assert_eq!(geo.rule_scale(1280, 720, S2), 2.0);
    assert_eq!(geo.rule_scale(900, 600, S4), 2.0);
}

#[test]
fn minetests_hud_keeps_its_size_and_its_inventory_grows_with_the_height() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minetest.toml");
    let geo = GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"));
    // 854x480: the measured window pixels.
    assert_eq!(at(&geo, 854, 480, AUTO, "hud.hotbar.0"), (226.0, 447.0));
    assert_eq!(at(&geo, 854, 480, AUTO, "inventory.main.0"), (305.0, 311.0));
    // 1024x576: the hotbar the same size on the bottom edge, centred (measured: slot 0 at
    // about 309, 543); the inventory 1.2 times as large, centred (main.0 at about 363, 373).
    let layout = geo.layout(1024, 576, AUTO);
    assert_eq!(layout.screen_scale("hud"), 1.0);
    assert!((layout.screen_scale("inventory") - 1.2).abs() < 1e-6);
    assert_eq!(at(&geo, 1024, 576, AUTO, "hud.hotbar.0"), (311.0, 543.0));
    let (x, y) = at(&geo, 1024, 576, AUTO, "inventory.main.0");
    assert!(
        (x - 365.6).abs() < 0.5 && (y - 373.2).abs() < 0.5,
        "({x}, {y})"
    );
}

#[test]
fn window_854x480() {
    // Auto, 3 and 4 all give scale 2: scaled 427 x 240.
    // Container panel 176 x 166: left = (427 - 176) / 2 = 125, top = (240 - 166) / 2 = 37.
    //   inventory.craft.0 (98, 18): x = (125 + 98 + 8) * 2 = 462, y = (37 + 18 + 8) * 2 = 126
    //   inventory.result (154, 28): x = (125 + 154 + 8) * 2 = 574, y = (37 + 28 + 8) * 2 = 146
    //   inventory.main.0 (8, 84): x = (125 + 16) * 2 = 282, y = (37 + 92) * 2 = 258
    //   inventory.hotbar.8 (8 + 8 * 18, 142): x = (125 + 160) * 2 = 570, y = (37 + 150) * 2 = 374
    // HUD bar 182 x 22: left = (427 - 182) / 2 = 122, top = 240 - 22 = 218.
    //   hud.hotbar.0 (3, 3): x = (122 + 11) * 2 = 266, y = (218 + 11) * 2 = 458
    //   hud.hotbar.8 (3 + 160, 3): x = (122 + 171) * 2 = 586
    let geo = minecraft();
    for scale in [AUTO, S2, S3, S4] {
        assert_eq!(geo.layout(854, 480, scale).scale(), 2.0);
        assert_eq!(
            at(&geo, 854, 480, scale, "inventory.craft.0"),
            (462.0, 126.0)
        );
        assert_eq!(
            at(&geo, 854, 480, scale, "inventory.result"),
            (574.0, 146.0)
        );
        assert_eq!(
            at(&geo, 854, 480, scale, "inventory.main.0"),
            (282.0, 258.0)
        );
        assert_eq!(
            at(&geo, 854, 480, scale, "inventory.hotbar.8"),
            (570.0, 374.0)
        );
        assert_eq!(at(&geo, 854, 480, scale, "hud.hotbar.0"), (266.0, 458.0));
        assert_eq!(at(&geo, 854, 480, scale, "hud.hotbar.8"), (586.0, 458.0));
    }
}

#[test]
fn window_1280x720() {
    let geo = minecraft();
    // Auto (and 4, clamped) -> scale 3: scaled ceil(1280 / 3) = 427 x 240.
    // Panel: left = (427 - 176) / 2 = 125, top = (240 - 166) / 2 = 37.
    //   crafting_table.grid.0 (30, 17): x = (125 + 30 + 8) * 3 = 489, y = (37 + 17 + 8) * 3 = 186
    //   crafting_table.grid.4 (48, 35): x = (125 + 56) * 3 = 543, y = (37 + 43) * 3 = 240
    //   crafting_table.grid.8 (66, 53): x = (125 + 74) * 3 = 597, y = (37 + 61) * 3 = 294
    //   crafting_table.result (124, 35): x = (125 + 132) * 3 = 771, y = 240
    // HUD: left = (427 - 182) / 2 = 122, top = 218.
    //   hud.hotbar.4 (83, 3): x = (122 + 91) * 3 = 639, y = (218 + 11) * 3 = 687
    for scale in [AUTO, S3, S4] {
        assert_eq!(geo.layout(1280, 720, scale).scale(), 3.0);
        assert_eq!(
            at(&geo, 1280, 720, scale, "crafting_table.grid.0"),
            (489.0, 186.0)
        );
        assert_eq!(
            at(&geo, 1280, 720, scale, "crafting_table.grid.4"),
            (543.0, 240.0)
        );
        assert_eq!(
            at(&geo, 1280, 720, scale, "crafting_table.grid.8"),
            (597.0, 294.0)
        );
        assert_eq!(
            at(&geo, 1280, 720, scale, "crafting_table.result"),
            (771.0, 240.0)
        );
        assert_eq!(at(&geo, 1280, 720, scale, "hud.hotbar.4"), (639.0, 687.0));
    }
    // Scale 2: scaled 640 x 360; panel left = (640 - 176) / 2 = 232, top = (360 - 166) / 2 = 97.
    //   inventory.main.26 (row 2, column 8 -> 8 + 144, 84 + 36):
    //   x = (232 + 152 + 8) * 2 = 784, y = (97 + 120 + 8) * 2 = 450
    // HUD: left = (640 - 182) / 2 = 229, top = 338; hud.hotbar.0: x = (229 + 11) * 2 = 480,
    //   y = (338 + 11) * 2 = 698
    assert_eq!(at(&geo, 1280, 720, S2, "inventory.main.26"), (784.0, 450.0));
    assert_eq!(at(&geo, 1280, 720, S2, "hud.hotbar.0"), (480.0, 698.0));
}

#[test]
fn window_1920x1080() {
    let geo = minecraft();
    // Auto / 4: scaled 480 x 270; panel left = (480 - 176) / 2 = 152, top = (270 - 166) / 2 = 52.
    //   furnace.input (56, 17): x = (152 + 56 + 8) * 4 = 864, y = (52 + 17 + 8) * 4 = 308
    //   furnace.fuel (56, 53): x = 864, y = (52 + 61) * 4 = 452
    //   furnace.result (116, 35): x = (152 + 124) * 4 = 1104, y = (52 + 43) * 4 = 380
    // HUD: left = (480 - 182) / 2 = 149, top = 248; hud.hotbar.0: x = (149 + 11) * 4 = 640,
    //   y = (248 + 11) * 4 = 1036
    for scale in [AUTO, S4] {
        assert_eq!(at(&geo, 1920, 1080, scale, "furnace.input"), (864.0, 308.0));
        assert_eq!(at(&geo, 1920, 1080, scale, "furnace.fuel"), (864.0, 452.0));
        assert_eq!(
            at(&geo, 1920, 1080, scale, "furnace.result"),
            (1104.0, 380.0)
        );
        assert_eq!(at(&geo, 1920, 1080, scale, "hud.hotbar.0"), (640.0, 1036.0));
    }
    // 3: scaled 640 x 360, panel (232, 97). inventory.craft.3 (row 1, column 1 -> 116, 36):
    //   x = (232 + 116 + 8) * 3 = 1068, y = (97 + 36 + 8) * 3 = 423
    assert_eq!(
        at(&geo, 1920, 1080, S3, "inventory.craft.3"),
        (1068.0, 423.0)
    );
    // 2: scaled 960 x 540, panel left = (960 - 176) / 2 = 392, top = (540 - 166) / 2 = 187.
    //   inventory.hotbar.0 (8, 142): x = (392 + 16) * 2 = 816, y = (187 + 150) * 2 = 674
    assert_eq!(
        at(&geo, 1920, 1080, S2, "inventory.hotbar.0"),
        (816.0, 674.0)
    );
}

#[test]
fn scaled_size_rounds_up_like_the_game() {
    // 1000 x 750 at 3: the game's scaled width is ceil(333.3) = 334, so the panel's left is
    // (334 - 176) / 2 = 79 (rounding down would give 78, 9 window pixels off);
    // top = (250 - 166) / 2 = 42. inventory.main.0: x = (79 + 16) * 3 = 285, y = (42 + 92) * 3 = 402
    let geo = minecraft();
    assert_eq!(
        at(&geo, 1000, 750, AUTO, "inventory.main.0"),
        (285.0, 402.0)
    );
}

#[test]
fn locations_list_every_slot_once() {
    let geo = minecraft();
    let all = geo.locations();
    // inventory 4 + 1 + 27 + 9, crafting table 9 + 1 + 27 + 9, furnace 3 + 27 + 9, hud 9.
    assert_eq!(all.len(), 41 + 46 + 39 + 9);
    for name in [
        "inventory.craft.0",
        "inventory.craft.3",
        "inventory.result",
        "inventory.main.26",
        "inventory.hotbar.8",
        "crafting_table.grid.8",
        "crafting_table.result",
        "furnace.input",
        "furnace.fuel",
        "furnace.result",
        "hud.hotbar.0",
        "hud.hotbar.8",
    ] {
        assert!(all.iter().any(|l| l == name), "{name} missing");
    }
    let layout = geo.layout(1280, 720, AUTO);
    for name in &all {
        geo.check(name).unwrap_or_else(|e| panic!("{e}"));
        let (x, y) = layout.slot_center(name).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            (0.0..1280.0).contains(&x) && (0.0..720.0).contains(&y),
            "{name}"
        );
    }
    assert_eq!(layout.locations(), all);
}

#[test]
fn bad_locations_say_what_exists() {
    let geo = minecraft();
    let layout = geo.layout(1280, 720, AUTO);
    let err = |loc: &str| layout.slot_center(loc).expect_err(loc);

    for loc in [
        "",
        "inventory",
        "inventory.",
        ".craft",
        "a.b.c.d",
        "inventory..0",
    ] {
        assert_eq!(err(loc), GuiError::Malformed(loc.to_string()), "{loc:?}");
    }
    let e = err("chest.main.0");
    assert!(matches!(e, GuiError::UnknownScreen { .. }));
    assert!(
        e.to_string()
            .contains("crafting_table, furnace, hud, inventory"),
        "{e}"
    );
    let e = err("furnace.grid.0");
    assert!(matches!(e, GuiError::UnknownRegion { .. }));
    assert!(
        e.to_string().contains("fuel, hotbar, input, main, result"),
        "{e}"
    );
    for loc in [
        "inventory.craft.4",
        "inventory.craft",
        "hud.hotbar.x",
        "hud.hotbar.-1",
        "hud.hotbar.01",
    ] {
        assert!(matches!(err(loc), GuiError::BadIndex { .. }), "{loc}");
    }
    assert_eq!(
        err("hud.hotbar.9").to_string(),
        "hud.hotbar.9: hud.hotbar has 9 slots, so it needs an index 0-8"
    );
    assert_eq!(
        err("furnace.fuel.0"),
        GuiError::UnexpectedIndex {
            location: "furnace.fuel.0".into(),
            region: "furnace.fuel".into()
        }
    );
    assert_eq!(
        geo.check("inventory.craft.9"),
        Err(err("inventory.craft.9"))
    );
}

fn parse_err(text: &str) -> (usize, String) {
    match GuiGeometry::parse(text, Path::new("game.toml")) {
        Err(DataFileError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

const HEAD: &str = "[keys]\ninventory = \"e\"\n\n[gui]\nslot_size = 16\npitch = 18\n\n";

#[test]
fn other_sections_are_left_to_their_loaders() {
    let text = format!(
        "{HEAD}[gui.screens.s]\nsize = [20, 20]\n[gui.screens.s.regions]\nr = {{ origin = [2, 2] }}\n"
    );
    let geo = GuiGeometry::parse(&text, Path::new("game.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(geo.locations(), ["s.r"]);
    // 1280 x 720 -> scale 3, scaled 427 x 240: left = (427 - 20) / 2 = 203, top = 110.
    assert_eq!(
        geo.layout(1280, 720, AUTO).slot_center("s.r"),
        Ok((639.0, 360.0))
    );
}

#[test]
fn data_errors_point_at_their_line() {
    let screen = "[gui.screens.s]\nsize = [176, 166]\n[gui.screens.s.regions]\n";
    // Line 11 is the region (HEAD is 7 lines, then 3 of screen).
    let (line, m) = parse_err(&format!(
        "{HEAD}{screen}r = {{ origin = [8, 8], colums = 2 }}\n"
    ));
    assert_eq!(line, 11, "{m}");
    assert!(m.contains("colums"), "{m}");
    let (line, m) = parse_err(&format!(
        "{HEAD}{screen}r = {{ origin = [8, 8], columns = 0 }}\n"
    ));
    assert_eq!(
        (line, m.as_str()),
        (
            11,
            "gui.screens.s.regions.r: columns and rows must be at least 1"
        )
    );
    let (line, m) = parse_err(&format!(
        "{HEAD}{screen}r = {{ origin = [8, 84], columns = 10 }}\n"
    ));
    assert_eq!(line, 11);
    assert!(m.contains("(186, 100), outside the 176 x 166 panel"), "{m}");
    let (line, m) = parse_err(&format!("{HEAD}{screen}R = {{ origin = [8, 8] }}\n"));
    assert_eq!(line, 11);
    assert!(m.contains("lower-case"), "{m}");
    let (line, m) = parse_err(&format!(
        "{HEAD}[gui.screens.Big]\nsize = [9, 9]\n[gui.screens.Big.regions]\nr = {{ origin = [0, 0] }}\n"
    ));
    assert_eq!(line, 8, "{m}");
    assert!(m.contains("gui.screens.Big: a name is lower-case"), "{m}");
    let (line, m) = parse_err(&format!(
        "{HEAD}{screen}r = {{ origin = [8, 8], columns = 2, pitch = 10 }}\n"
    ));
    assert_eq!(line, 11);
    assert!(m.contains("overlap"), "{m}");
    let (line, m) = parse_err(&format!(
        "{HEAD}[gui.screens.s]\nsize = [176, 166]\nanchor = \"top\"\n[gui.screens.s.regions]\nr = {{ origin = [8, 8] }}\n"
    ));
    assert_eq!(line, 10, "{m}");
    let (line, m) = parse_err(&format!(
        "{HEAD}[gui.screens.s]\nsize = [0, 166]\n[gui.screens.s.regions]\nr = {{ origin = [8, 8] }}\n"
    ));
    assert_eq!(line, 9, "{m}");
    let (line, m) = parse_err("[gui]\nslot_size = 16\npitch = 18\nscale = 2\n");
    assert_eq!(line, 4, "{m}");
    assert!(m.contains("ScaleSpec"), "{m}");
    let hud = "[gui.screens.hud]\nsize = [182, 22]\n[gui.screens.hud.regions]\nhotbar = { origin = [3, 3], columns = 9, pitch = 20 }\n";
    let bad_rule = format!("{HEAD}[gui.scale]\nrule = \"vanilla\"\n{hud}");
    let (line, m) = parse_err(&bad_rule);
    assert_eq!(line, 8, "{m}");
    assert!(m.contains("gui.scale.rule: \"vanilla\""), "{m}");
    let no_region = format!(
        "{HEAD}[gui.scale]\nmeasure = {{ region = \"hud.bar\", rect = [0, 0, 10, 10], luma = [0, 9] }}\n{hud}"
    );
    let (line, m) = parse_err(&no_region);
    assert_eq!(line, 8, "{m}");
    assert!(m.contains("\"hud.bar\" is not a <screen>.<region>"), "{m}");
    let (_, m) = parse_err("[keys]\ninventory = \"e\"\n");
    assert!(m.contains("gui"), "{m}");
    let (line, m) = parse_err(&format!("{HEAD}[gui.screens]\n"));
    assert_eq!((line, m.as_str()), (4, "gui.screens: no screens defined"));
}

#[test]
fn bag_regions_say_which_slots_are_owned() {
    let geo = minecraft();
    // 854 x 480 -> scale 2; inventory.main.0's centre, the craft grid's first slot, the
    // HUD hotbar's fourth slot.
    let layout = geo.layout(854, 480, AUTO);
    let centre = |l: &str| layout.slot_center(l).unwrap_or_else(|e| panic!("{e}"));
    let (mx, my) = centre("inventory.main.0");
    assert!(layout.in_bag(mx, my));
    assert!(layout.in_bag(mx + 19.0, my - 19.0), "within 10 GUI px");
    // Above the top row (the next slot to the side is only 18 GUI px away).
    assert!(!layout.in_bag(mx, my - 21.0), "more than 10 GUI px off");
    let (hx, hy) = centre("hud.hotbar.3");
    assert!(layout.in_bag(hx, hy));
    // Which screen's bag: the HUD hotbar is told from the open inventory's rows.
    assert_eq!(layout.bag_screen(hx, hy), Some("hud"));
    // Minecraft's crafting table and inventory share their bag rows: either is an open
    // screen (the first by name is named).
    assert_eq!(layout.bag_screen(mx, my), Some("crafting_table"));
    let (ix, iy) = centre("inventory.hotbar.3");
    assert_eq!(layout.bag_screen(ix, iy), Some("crafting_table"));
    assert_eq!(layout.bag_screen(mx, my - 21.0), None);
    for work in ["inventory.craft.0", "inventory.result", "furnace.fuel"] {
        let (x, y) = centre(work);
        assert!(!layout.in_bag(x, y), "{work} is not the bag");
    }
    // Without the key every place counts.
    let text = format!(
        "{HEAD}[gui.screens.s]\nsize = [20, 20]\n[gui.screens.s.regions]\nr = {{ origin = [2, 2] }}\n"
    );
    let open = GuiGeometry::parse(&text, Path::new("g.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(open.layout(854, 480, AUTO).in_bag(1.0, 1.0));
    // A region no screen has is refused, on the key's line.
    let text = text.replace("pitch = 18\n", "pitch = 18\nbag_regions = [\"bag\"]\n");
    let (line, m) = parse_err(&text);
    assert_eq!(
        (line, m.as_str()),
        (7, "gui.bag_regions: no screen has a region \"bag\"")
    );
    // So is a screen drawn under the others that the profile does not have.
    let text = text.replace("bag_regions = [\"bag\"]", "drawn_under_screens = \"hud\"");
    let (line, m) = parse_err(&text);
    assert_eq!(
        (line, m.as_str()),
        (
            7,
            "gui.drawn_under_screens: no screen \"hud\" in [gui.screens]"
        )
    );
}

#[test]
fn a_missing_file_is_an_io_error() {
    let err = GuiGeometry::load(Path::new("/nonexistent/minecraft.toml")).expect_err("missing");
    assert!(matches!(err, DataFileError::Io { .. }));
}
