//! Scene files: every shipped scene loads and builds, geometry ids follow file order across
//! interleaved kinds, mesh placement is scale → rotate → translate, `[[generate]]` entries
//! reach the generators (whose output `tests/golden.rs` pins), and every kind of bad input
//! is an error naming the file and the place.

use glam::Vec3;
use lanecast::camera::Camera;
use lanecast::scene::GeomKind;
use lanecast::scene::file::{DEFAULT_SCENE, SceneFile, default_scene, load_scene_file, parse_scene};
use lanecast::scene::generate::{CityParams, SpheresParams, TerrainParams, city, spheres, terrain};
use lanecast::{Ray, SceneError};
use std::path::{Path, PathBuf};

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

fn parse(text: &str) -> Result<SceneFile, SceneError> {
    parse_scene(text, Path::new("test.toml"), Path::new(""))
}

fn down(x: f32, z: f32) -> Ray {
    Ray::new(Vec3::new(x, 100.0, z), -Vec3::Y)
}

// ---------------------------------------------------------------------------------------
// Shipped scenes
// ---------------------------------------------------------------------------------------

/// (file, geometry kinds in id order)
const SHIPPED: &[(&str, &[GeomKind])] = &[
    (
        "default.toml",
        &[
            GeomKind::Plane,
            GeomKind::Spheres,
            GeomKind::Spheres,
            GeomKind::Spheres,
            GeomKind::Boxes,
            GeomKind::Boxes,
            GeomKind::Mesh,
            GeomKind::Spheres,
        ],
    ),
    ("bunny.toml", &[GeomKind::Mesh, GeomKind::Plane]),
    ("sponza.toml", &[GeomKind::Mesh]),
    ("city.toml", &[GeomKind::Plane, GeomKind::Boxes]),
    ("terrain.toml", &[GeomKind::Mesh]),
];

#[test]
fn every_shipped_scene_loads_and_builds() {
    let mut listed: Vec<String> = std::fs::read_dir(scenes_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    listed.sort();
    let mut expected: Vec<String> = SHIPPED.iter().map(|(n, _)| n.to_string()).collect();
    expected.sort();
    assert_eq!(listed, expected, "every scene in scenes/ is covered here");

    for (file, kinds) in SHIPPED {
        let sf = load_scene_file(&scenes_dir().join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sf.name, file.trim_end_matches(".toml"));
        let cam = sf.camera.unwrap_or_else(|| panic!("{file} has a camera"));
        cam.check().unwrap();
        let scene = sf.builder.build().unwrap();
        scene.validate().unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let got: Vec<GeomKind> = scene.geoms().iter().map(|g| g.kind).collect();
        assert_eq!(&got, kinds, "{file}");
        // The camera sees the scene: most of a coarse grid of primary rays hit something.
        let small = cam.with_size(16, 12);
        let hits = (0..12)
            .flat_map(|y| (0..16).map(move |x| (x, y)))
            .filter(|&(x, y)| scene.intersect(&small.ray(x, y)).is_some())
            .count();
        assert!(hits >= 16 * 12 / 2, "{file}: only {hits} of 192 rays hit");
    }
}

#[test]
fn default_scene_is_the_embedded_file() {
    let on_disk = std::fs::read_to_string(scenes_dir().join("default.toml")).unwrap();
    assert_eq!(DEFAULT_SCENE, on_disk);
    let sf = default_scene();
    assert_eq!(sf.name, "default");
    assert_eq!(sf.camera.unwrap(), Camera::new(Vec3::new(0.0, 2.2, 6.5), Vec3::new(0.0, 0.7, 0.0), 45.0));
    let scene = sf.builder.build().unwrap();
    // Straight down onto the big ball (id 1), the floor (id 0) and the crate (id 4).
    assert_eq!(scene.intersect(&down(0.0, 0.0)).unwrap().geom, 1);
    assert_eq!(scene.intersect(&down(0.0, -1.5)).unwrap().geom, 0);
    assert_eq!(scene.intersect(&down(-2.9, -1.0)).unwrap().geom, 4);
    let back = Ray::new(Vec3::new(0.0, 3.0, 0.0), -Vec3::Z); // over the big ball
    assert_eq!(scene.intersect(&back).unwrap().geom, 6);
    assert_eq!(scene.geoms()[7].prims, 24);
}

#[test]
fn bunny_sits_on_its_floor() {
    let scene = load_scene_file(&scenes_dir().join("bunny.toml")).unwrap().builder.build().unwrap();
    let b = scene.bounds();
    assert!((b.min.y - 0.032987).abs() < 1e-5, "{b:?}");
    let floor = scene.intersect(&down(0.5, 0.5)).unwrap();
    assert_eq!(floor.geom, 1);
    assert!((100.0 - floor.t - 0.0329).abs() < 1e-4);
    assert_eq!(scene.geoms()[0].prims, 69_451);
}

// ---------------------------------------------------------------------------------------
// Geometry ids
// ---------------------------------------------------------------------------------------

#[test]
fn geometry_ids_follow_file_order_across_interleaved_kinds() {
    let text = r#"
[[sphere]]                  # 0, at x = 0
center = [0, 0, 0]
radius = 1

[[box]]                     # 1, at x = 3
min = [2.5, -1, -0.5]
max = [3.5, 1, 0.5]

[camera]                    # not a geometry
eye = [0, 5, 20]
look_at = [0, 0, 0]
fov_y_deg = 40

[[sphere]]                  # 2, at x = 6
center = [6, 0, 0]
radius = 1

[[plane]]                   # 3, y = -10
normal = [0, 1, 0]
d = -10

[[triangle]]                # 4, at x = 9
vertices = [[8, 0, -1], [10, 0, -1], [9, 0, 1]]

[[generate]]                # 5, at x = 12
kind = "spheres"
seed = 3
count = 1
min = [12, 0, 0]
max = [12, 0, 0]
radius = [0.5, 0.5]

[[box]]                     # 6, at x = 15
min = [14.5, -1, -0.5]
max = [15.5, 1, 0.5]

[[mesh]]                    # 7 (an error if read: ids are checked before this is loaded)
path = "no-such-mesh.obj"
"#;
    // The mesh entry is last, so everything before it is in the error-free prefix; check
    // the ids on the file without it, then check that the mesh is reached last.
    let (head, _) = text.split_once("[[mesh]]").unwrap();
    let sf = parse(head).unwrap();
    assert!(sf.camera.is_some());
    let scene = sf.builder.build().unwrap();
    for (x, id) in [(0.0, 0), (3.0, 1), (6.0, 2), (9.0, 4), (12.0, 5), (15.0, 6), (20.0, 3)] {
        let h = scene.intersect(&down(x, 0.0)).unwrap();
        assert_eq!(h.geom, id, "ray at x = {x}");
    }
    let kinds: Vec<GeomKind> = scene.geoms().iter().map(|g| g.kind).collect();
    assert_eq!(
        kinds,
        [
            GeomKind::Spheres,
            GeomKind::Boxes,
            GeomKind::Spheres,
            GeomKind::Plane,
            GeomKind::Mesh,
            GeomKind::Spheres,
            GeomKind::Boxes
        ]
    );
    let e = parse(text).unwrap_err().to_string();
    assert!(e.contains("test.toml:39:8: cannot load mesh: no-such-mesh.obj: cannot open"), "{e}");
}

#[test]
fn inline_arrays_follow_file_order_too() {
    let text = r#"
box = [{ min = [2.5, -1, -0.5], max = [3.5, 1, 0.5] }]
sphere = [{ center = [0, 0, 0], radius = 1 }, { center = [6, 0, 0], radius = 1 }]
"#;
    let scene = parse(text).unwrap().builder.build().unwrap();
    for (x, id) in [(3.0, 0), (0.0, 1), (6.0, 2)] {
        assert_eq!(scene.intersect(&down(x, 0.0)).unwrap().geom, id);
    }
}

// ---------------------------------------------------------------------------------------
// Meshes
// ---------------------------------------------------------------------------------------

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn mesh_is_scaled_then_rotated_then_translated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("meshes")).unwrap();
    write(&dir.path().join("meshes"), "tri.obj", "v 1 0 0\nv 0 1 0\nv 0 0 0\nf 1 2 3\n");
    // p ↦ t + Rz(90°) · Rx(90°) · (s ∘ p):
    //   (1,0,0) → (2,0,0) → (2,0,0) → (0,2,0) → (10,22,30)
    //   (0,1,0) → (0,3,0) → (0,0,3) → (0,0,3) → (10,20,33)
    //   (0,0,0) → (10,20,30)
    let scene_path = write(
        dir.path(),
        "s.toml",
        r#"
[[mesh]]
path = "meshes/tri.obj"
scale = [2, 3, 1]
rotate_deg = [90, 0, 90]
translate = [10, 20, 30]
"#,
    );
    let scene = load_scene_file(&scene_path).unwrap().builder.build().unwrap();
    let b = scene.bounds();
    for (got, want) in [(b.min, Vec3::new(10.0, 20.0, 30.0)), (b.max, Vec3::new(10.0, 22.0, 33.0))] {
        assert!((got - want).abs().max_element() < 1e-4, "{b:?}");
    }
    let along_x = |y: f32, z: f32| Ray::new(Vec3::new(20.0, y, z), -Vec3::X);
    let h = scene.intersect(&along_x(20.5, 30.5)).unwrap();
    assert_eq!((h.geom, h.prim), (0, 0));
    assert!((h.t - 10.0).abs() < 1e-4);
    assert!(scene.intersect(&along_x(21.5, 32.5)).is_none());

    // A uniform scale as one number; the other transforms default to identity.
    let scene_path = write(dir.path(), "u.toml", "[[mesh]]\npath = \"meshes/tri.obj\"\nscale = 4\n");
    let b = load_scene_file(&scene_path).unwrap().builder.build().unwrap().bounds();
    assert!((b.max - Vec3::new(4.0, 4.0, 0.0)).abs().max_element() < 1e-5, "{b:?}");
    assert!(b.min.abs().max_element() < 1e-5, "{b:?}");
}

#[test]
fn degenerate_mesh_triangles_are_counted_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 2 0 0\nf 1 2 3\nf 1 2 4\n");
    let p = write(dir.path(), "s.toml", "[[mesh]]\npath = \"m.obj\"\n");
    let sf = load_scene_file(&p).unwrap();
    let scene = sf.builder.build().unwrap();
    assert_eq!(scene.geoms()[0].prims, 2);
    assert_eq!(scene.geoms()[0].degenerate, 1);
    // Scaling to zero makes every triangle degenerate, which is still not an error.
    let p = write(dir.path(), "z.toml", "[[mesh]]\npath = \"m.obj\"\nscale = 0\n");
    assert_eq!(load_scene_file(&p).unwrap().builder.build().unwrap().geoms()[0].degenerate, 2);
}

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// `[[generate]]` entries give what the generator functions give for the same keys (whose
/// output is pinned to independently computed values in `tests/golden.rs`), and the seed
/// key reaches each generator.
#[test]
fn generate_entries_pass_their_keys_to_the_generators() {
    let text = |seed: u64| {
        format!(
            "[[generate]]\nkind = \"terrain\"\nseed = {seed}\nresolution = 16\nheight = 7\n\
             [[generate]]\nkind = \"city\"\nseed = {seed}\nblocks = [2, 3]\norigin = [0, 50, 0]\n\
             [[generate]]\nkind = \"spheres\"\nseed = {seed}\ncount = 10\nmin = [25, 55, 25]\nmax = [35, 65, 35]\nradius = [1.5, 3]\n"
        )
    };
    let direct = |seed: u64| {
        let mut b = lanecast::SceneBuilder::new();
        let m = terrain(&TerrainParams { seed, resolution: 16, height: 7.0, ..Default::default() }).unwrap();
        b.add_mesh(&m.positions, &m.indices).unwrap();
        b.add_boxes(
            &city(&CityParams { seed, blocks: [2, 3], origin: [0.0, 50.0, 0.0], ..Default::default() }).unwrap(),
        )
        .unwrap();
        let sp =
            SpheresParams { seed, count: 10, min: [25.0, 55.0, 25.0], max: [35.0, 65.0, 35.0], radius: [1.5, 3.0] };
        b.add_spheres(&spheres(&sp).unwrap()).unwrap();
        b.build().unwrap()
    };
    let cam = Camera::new(Vec3::new(60.0, 120.0, 60.0), Vec3::ZERO, 60.0).with_size(24, 16);
    let image = |scene: &lanecast::Scene| {
        (0..16)
            .flat_map(|y| (0..24).map(move |x| (x, y)))
            .map(|(x, y)| scene.intersect(&cam.ray(x, y)).map(|h| (h.geom, h.prim, h.t.to_bits())))
            .collect::<Vec<_>>()
    };
    for seed in [1, 2] {
        let scene = parse(&text(seed)).unwrap().builder.build().unwrap();
        let g: Vec<GeomKind> = scene.geoms().iter().map(|g| g.kind).collect();
        assert_eq!(g, [GeomKind::Mesh, GeomKind::Boxes, GeomKind::Spheres]);
        let prims: Vec<usize> = scene.geoms().iter().map(|g| g.prims as usize).collect();
        assert_eq!(prims, [2 * 16 * 16, 2 * 3 * 4, 10]);
        let img = image(&scene);
        assert_eq!(img, image(&direct(seed)), "seed {seed}: the file's scene differs from the generators' output");
        // Every geometry is seen, so the comparison covers all three generators.
        for geom in 0..3 {
            assert!(img.iter().flatten().any(|h| h.0 == geom), "seed {seed}: geometry {geom} not in view");
        }
    }
    assert_ne!(image(&direct(1)), image(&direct(2)), "the seed changes the scene");
}

#[test]
fn generator_defaults_apply_to_missing_keys() {
    let sf = parse("[[generate]]\nkind = \"spheres\"\n").unwrap();
    let scene = sf.builder.build().unwrap();
    assert_eq!(scene.geoms()[0].prims, 100);
    let sf = parse("[[generate]]\nkind = \"city\"\nseed = 4\n").unwrap();
    assert_eq!(sf.builder.build().unwrap().geoms()[0].prims, 256);
    let sf = parse("[[generate]]\nkind = \"terrain\"\nresolution = 8\n").unwrap();
    assert_eq!(sf.builder.build().unwrap().geoms()[0].prims, 128);
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Parses `text` as `bad.toml` and checks the error contains every one of `want`.
fn fails(text: &str, want: &[&str]) {
    let e = parse_scene(text, Path::new("dir/bad.toml"), Path::new("/nonexistent-dir")).map(|_| ()).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SceneError::File { .. }), "{msg}");
    for w in want {
        assert!(msg.contains(w), "expected {w:?} in: {msg}");
    }
    assert!(!msg.contains('\n'), "one line: {msg}");
}

#[test]
fn syntax_errors_are_located() {
    fails("[[sphere]]\ncenter = [0, 0,\n", &["dir/bad.toml:2:16: ", "unclosed array"]);
    fails("[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\n[sphere]\n", &["dir/bad.toml:4:2: ", "duplicate key"]);
    fails("[[sphere]]\ncenter = [0, 0, 0]\ncenter = [1, 0, 0]\n", &["dir/bad.toml:3:1: "]);
}

#[test]
fn unknown_keys_are_errors() {
    fails("[[spheres]]\ncenter = [0, 0, 0]\n", &["dir/bad.toml:1:3: ", "unknown key `spheres`"]);
    fails("[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\ncolor = 3\n", &["dir/bad.toml:4:1: ", "unknown field `color`"]);
    fails(
        "[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 0]\nfov_y_deg = 40\nfov = 3\n",
        &["dir/bad.toml:5:1: ", "unknown field `fov`"],
    );
    fails("[[mesh]]\npath = \"a.obj\"\nrotate = [0, 0, 0]\n", &["dir/bad.toml:3:1: ", "unknown field `rotate`"]);
    // A key of another generator kind.
    fails(
        "[[generate]]\nkind = \"terrain\"\nblocks = [2, 2]\n",
        &["dir/bad.toml:3:1: ", "terrain generator: unknown field `blocks`"],
    );
}

#[test]
fn wrong_types_are_errors() {
    fails(
        "[[sphere]]\ncenter = [0, 0, 0]\nradius = \"big\"\n",
        &["dir/bad.toml:3:10: ", "sphere `radius`", "invalid type"],
    );
    fails("[[box]]\nmin = [0, 0]\nmax = [1, 1, 1]\n", &["dir/bad.toml:2:7: ", "box `min`"]);
    fails("[[triangle]]\nvertices = [[0, 0, 0], [1, 0, 0]]\n", &["dir/bad.toml:2:12: ", "triangle `vertices`"]);
    fails(
        "[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 0]\nfov_y_deg = 40\nwidth = -5\n",
        &["dir/bad.toml:5:9: ", "camera `width`"],
    );
    fails("[[mesh]]\npath = \"a.obj\"\nscale = [1, 2]\n", &["dir/bad.toml:3:9: ", "mesh `scale`"]);
    fails("[[mesh]]\npath = \"a.obj\"\nscale = \"x\"\n", &["dir/bad.toml:3:9: ", "a number or an array of 3 numbers"]);
    fails("[[generate]]\nkind = \"spheres\"\ncount = 1.5\n", &["dir/bad.toml:3:9: ", "spheres generator `count`"]);
    fails("[[generate]]\nkind = 3\n", &["dir/bad.toml:2:8: ", "must be a string"]);
    fails("sphere = 3\n", &["dir/bad.toml:1:1: ", "array of tables"]);
    fails("[sphere]\ncenter = [0, 0, 0]\nradius = 1\n", &["dir/bad.toml:1:2: ", "array of tables"]);
    fails("sphere = [1, 2]\n", &["dir/bad.toml:1:11: ", "must be a table"]);
    fails("camera = 1\n", &["dir/bad.toml:1:10: ", "must be a table"]);
}

#[test]
fn missing_fields_are_errors() {
    fails("\n[[sphere]]\ncenter = [0, 0, 0]\n", &["dir/bad.toml:2:1: ", "missing field `radius`"]);
    fails("[[plane]]\nnormal = [0, 1, 0]\n", &["dir/bad.toml:1:1: ", "missing field `d`"]);
    fails("[[mesh]]\nscale = 2\n", &["dir/bad.toml:1:1: ", "missing field `path`"]);
    fails("[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 0]\n", &["dir/bad.toml:1:1: ", "missing field `fov_y_deg`"]);
    fails("[[generate]]\nseed = 1\n", &["dir/bad.toml:1:1: ", "missing field `kind`"]);
}

#[test]
fn values_out_of_range_are_errors() {
    fails("[[sphere]]\ncenter = [0, 0, 0]\nradius = -1\n", &["dir/bad.toml:3:10: ", "radius", ">= 0"]);
    fails("[[sphere]]\ncenter = [0, nan, 0]\nradius = 1\n", &["dir/bad.toml:2:10: ", "finite"]);
    fails("[[box]]\nmin = [0, 2, 0]\nmax = [1, 1, 1]\n", &["dir/bad.toml:2:7: ", "min must be <= max"]);
    fails("[[plane]]\nnormal = [0, 0, 0]\nd = 1\n", &["dir/bad.toml:2:10: ", "non-zero"]);
    fails("[[plane]]\nnormal = [0, 1, 0]\nd = inf\n", &["dir/bad.toml:3:5: ", "finite"]);
    fails("[[triangle]]\nvertices = [[0, 0, 0], [1, 0, 0], [0, inf, 0]]\n", &["dir/bad.toml:2:12: ", "finite"]);
    fails("[[mesh]]\npath = \"a.obj\"\ntranslate = [0, nan, 0]\n", &["dir/bad.toml:3:13: ", "finite"]);
}

#[test]
fn bad_cameras_are_errors() {
    let cam = |extra: &str| format!("[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 0]\nfov_y_deg = 40\n{extra}");
    fails("[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 1]\nfov_y_deg = 40\n", &["dir/bad.toml:1:1: ", "same point"]);
    fails("[camera]\neye = [0, 0, 1]\nlook_at = [0, 0, 0]\nfov_y_deg = 180\n", &["dir/bad.toml:4:13: ", "fov_y_deg"]);
    fails(&cam("up = [0, 0, 2]\n"), &["dir/bad.toml:5:6: ", "parallel"]);
    fails(&cam("height = 0\n"), &["dir/bad.toml:5:10: ", "image size"]);
    fails(&cam("width = 0\n"), &["dir/bad.toml:5:9: ", "image size"]);
}

#[test]
fn generator_errors_are_located() {
    fails(
        "[[generate]]\nkind = \"forest\"\nseed = 1\n",
        &["dir/bad.toml:2:8: ", "unknown generate kind `forest`", "terrain"],
    );
    fails("[[generate]]\nkind = \"terrain\"\nresolution = 0\n", &["dir/bad.toml:3:14: ", "resolution"]);
    fails("[[generate]]\nkind = \"terrain\"\nsize = [10, -1]\n", &["dir/bad.toml:3:8: ", "size"]);
    fails("[[generate]]\nkind = \"city\"\nmin_height = 10\nmax_height = 5\n", &["dir/bad.toml:4:14: ", "max_height"]);
    fails("[[generate]]\nkind = \"city\"\nblocks = [0, 3]\n", &["dir/bad.toml:3:10: ", "blocks"]);
    fails("[[generate]]\nkind = \"spheres\"\nradius = [2, 1]\n", &["dir/bad.toml:3:10: ", "radius"]);
    fails("[[generate]]\nkind = \"spheres\"\nmin = [0, 0, 0]\nmax = [1, -1, 1]\n", &["dir/bad.toml:4:7: ", "max"]);
    fails("[[generate]]\nkind = \"spheres\"\ncount = 100000000000\n", &["dir/bad.toml:3:9: ", "count"]);
    fails("[[generate]]\nkind = \"spheres\"\nseed = -1\n", &["dir/bad.toml:3:8: ", "spheres generator `seed`"]);
    // A default that clashes with a given key is blamed on the key that is there.
    fails("[[generate]]\nkind = \"city\"\nmin_height = 50\n", &["dir/bad.toml:3:14: ", "max_height"]);
}

#[test]
fn mesh_file_errors_keep_the_mesh_message_and_add_the_scene_place() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n");
    write(dir.path(), "mesh.stl", "solid\n");
    let scene = |name: &str, text: &str| {
        let p = write(dir.path(), name, text);
        load_scene_file(&p).map(|_| ()).unwrap_err().to_string()
    };
    let e = scene("a.toml", "[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\n\n[[mesh]]\npath = \"missing.obj\"\n");
    assert!(e.contains("a.toml:6:8: "), "{e}");
    assert!(e.contains("missing.obj: cannot open"), "{e}");
    let e = scene("b.toml", "[[mesh]]\npath = \"bad.obj\"\n");
    assert!(e.contains("b.toml:2:8: "), "{e}");
    assert!(e.contains("bad.obj:line 3"), "{e}");
    let e = scene("c.toml", "[[mesh]]\npath = \"mesh.stl\"\n");
    assert!(e.contains("c.toml:2:8: ") && e.contains("unsupported mesh format"), "{e}");
    // A transform that overflows f32 is a located error too.
    write(dir.path(), "ok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    let e = scene(
        "d.toml",
        "[[mesh]]\npath = \"ok.obj\"\nscale = 1e30\ntranslate = [0, 0, 0]\nrotate_deg = [0, 0, 0]\n[[mesh]]\npath = \"ok.obj\"\nscale = 3e38\ntranslate = [3e38, 0, 0]\n",
    );
    assert!(e.contains("d.toml:6:1: ") && e.contains("not finite"), "{e}");
}

#[test]
fn missing_scene_file_is_an_error_naming_it() {
    let e = load_scene_file(Path::new("/nonexistent-dir/nothing.toml")).map(|_| ()).unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent-dir/nothing.toml: cannot read"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = load_scene_file(dir.path()).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn the_first_error_in_the_file_is_reported() {
    // Keys of the document are visited in file order, not in key order.
    fails(
        "[[sphere]]\ncenter = [0, 0, 0]\nradius = -1\n[[box]]\nmin = [1, 1, 1]\nmax = [0, 0, 0]\n",
        &["dir/bad.toml:3:10: "],
    );
    fails("[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\n[camera]\neye = 1\n", &["dir/bad.toml:5:7: "]);
}
