//! The real `lanecast` binary on every subcommand: good paths with their outputs checked for
//! content, and every bad input (exit code 2, a message naming the file and place, no output
//! file left behind).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn lanecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanecast")).args(args).output().expect("run lanecast")
}

fn lanecast_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanecast"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lanecast");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "lanecast failed ({:?}):\n{}", o.status.code(), stderr(o));
}

/// Exit code 2 and a message that mentions every `needle`.
fn bad(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "expected exit 2, got {:?}; stderr:\n{}", o.status.code(), stderr(o));
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "error message {e:?} does not mention {n:?}");
    }
}

/// A wall (box, geometry 0) at x ∈ [4, 5] and a sphere (geometry 1) at z = -10.
const WALL_SCENE: &str = r#"
[camera]
eye = [0.0, 1.0, 12.0]
look_at = [0.0, 1.0, 0.0]
fov_y_deg = 50.0
width = 64
height = 48

[[box]]
min = [4.0, 0.0, -10.0]
max = [5.0, 10.0, 10.0]

[[sphere]]
center = [0.0, 0.0, -10.0]
radius = 1.0
"#;

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("wall.toml");
    std::fs::write(&scene, WALL_SCENE).unwrap();
    (dir, scene)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const RAYS_CSV: &str = "ox,oy,oz,dx,dy,dz\n\
# a comment line\n\
0,1,0,1,0,0\n\
\n\
0,0,0,0,0,-1\n\
0,1,0,0,1,0\n\
nan,0,0,1,0,0\n";

#[test]
fn cast_csv_gives_the_expected_hits() {
    let (dir, scene) = setup();
    let rays = dir.path().join("rays.csv");
    std::fs::write(&rays, RAYS_CSV).unwrap();
    let out = dir.path().join("hits.csv");
    ok(&lanecast(&["cast", s(&scene), "--rays", s(&rays), "--out", s(&out)]));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "t,geom,prim,inst,u,v,nx,ny,nz");
    assert_eq!(lines.len(), 5, "{text}");
    let f: Vec<f32> = lines[1].split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(f, vec![4.0, 0.0, 0.0, -1.0, 0.0, 0.0, -1.0, 0.0, 0.0], "ray into the wall (not instanced)");
    let f: Vec<f32> = lines[2].split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(&f[..6], &[9.0, 1.0, 0.0, -1.0, 0.0, 0.0], "ray into the sphere");
    assert_eq!(&f[6..], &[0.0, 0.0, 1.0]);
    assert_eq!(lines[3], "inf,-1,-1,-1,0,0,0,0,0", "a miss");
    assert_eq!(lines[4], "inf,-1,-1,-1,0,0,0,0,0", "a NaN ray is a miss, not an error");
    // Every backend and thread count gives the same file.
    for backend in ["scalar", "x4", "x8", "x16"] {
        let o = lanecast(&["cast", s(&scene), "--rays", s(&rays), "--backend", backend, "--threads", "1"]);
        ok(&o);
        assert_eq!(stdout(&o), text, "backend {backend} to stdout");
    }
    // Rays from stdin.
    let o = lanecast_stdin(&["cast", s(&scene), "--rays", "-"], RAYS_CSV);
    ok(&o);
    assert_eq!(stdout(&o), text);
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A minimal .npy writer for inputs (the CLI's own reader must accept it).
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// Parses a little .npy file: (header text, data bytes).
fn read_npy(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "npy magic");
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
    };
    assert_eq!((start + hlen) % 64, 0, "npy header padded to 64 bytes");
    (String::from_utf8(bytes[start..start + hlen].to_vec()).unwrap(), bytes[start + hlen..].to_vec())
}

#[test]
fn cast_bin_and_npy_round_trip() {
    let (dir, scene) = setup();
    let rays = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, f32::INFINITY, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, f32::INFINITY];
    let bin_in = dir.path().join("rays.bin");
    std::fs::write(&bin_in, f32_bytes(&rays)).unwrap();
    let bin_out = dir.path().join("hits.bin");
    ok(&lanecast(&["cast", s(&scene), "--rays", s(&bin_in), "--out", s(&bin_out)]));
    let b = std::fs::read(&bin_out).unwrap();
    assert_eq!(b.len(), 72, "two 36-byte records");
    assert_eq!(f32::from_le_bytes(b[0..4].try_into().unwrap()), 4.0);
    assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 0);
    assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), u32::MAX, "inst: not instanced");
    assert_eq!(f32::from_le_bytes(b[24..28].try_into().unwrap()), -1.0, "nx");
    assert_eq!(f32::from_le_bytes(b[36..40].try_into().unwrap()), f32::INFINITY, "miss t");
    assert_eq!(u32::from_le_bytes(b[40..44].try_into().unwrap()), u32::MAX, "miss geom");

    let npy_in = dir.path().join("rays.npy");
    std::fs::write(&npy_in, npy("<f4", "(2, 8)", &f32_bytes(&rays))).unwrap();
    let npy_out = dir.path().join("hits.npy");
    ok(&lanecast(&["cast", s(&scene), "--rays", s(&npy_in), "--out", s(&npy_out)]));
    let (header, data) = read_npy(&std::fs::read(&npy_out).unwrap());
    assert!(header.contains("'shape': (2,)"), "{header}");
    for field in ["('t', '<f4')", "('geom', '<u4')", "('prim', '<u4')", "('inst', '<u4')", "('nz', '<f4')"] {
        assert!(header.replace('"', "'").contains(field), "{header} lacks {field}");
    }
    assert_eq!(data, b, "npy records equal the bin records");
    // (N, 6) rays are accepted too.
    let six: Vec<f32> = rays.chunks(8).flat_map(|r| r[..6].to_vec()).collect();
    std::fs::write(&npy_in, npy("<f4", "(2, 6)", &f32_bytes(&six))).unwrap();
    ok(&lanecast(&["cast", s(&scene), "--rays", s(&npy_in), "--out", s(&npy_out)]));
    assert_eq!(read_npy(&std::fs::read(&npy_out).unwrap()).1, b);
}

#[test]
fn los_across_and_beside_a_wall() {
    let (dir, scene) = setup();
    let segs = dir.path().join("segs.csv");
    std::fs::write(&segs, "ax,ay,az,bx,by,bz\n0,1,0,10,1,0\n0,1,20,10,1,20\n0,1,0,3.9,1,0\n").unwrap();
    let out = dir.path().join("vis.csv");
    ok(&lanecast(&["los", s(&scene), "--segments", s(&segs), "--out", s(&out)]));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "visible\n0\n1\n1\n");
    let bin = dir.path().join("vis.bin");
    ok(&lanecast(&["los", s(&scene), "--segments", s(&segs), "--out", s(&bin), "--backend", "scalar"]));
    assert_eq!(std::fs::read(&bin).unwrap(), vec![0, 1, 1]);
    let npy_out = dir.path().join("vis.npy");
    ok(&lanecast(&["los", s(&scene), "--segments", s(&segs), "--out", s(&npy_out)]));
    let (header, data) = read_npy(&std::fs::read(&npy_out).unwrap());
    assert!(header.contains("|b1") && header.contains("(3,)"), "{header}");
    assert_eq!(data, vec![0, 1, 1]);
}

#[test]
fn render_writes_a_png_of_the_default_scene() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, shade) in [("single", "normal"), ("packet", "depth"), ("packet", "ao")] {
        let png = dir.path().join(format!("{mode}-{shade}.png"));
        let o =
            lanecast(&["render", "-o", s(&png), "--width", "80", "--height", "60", "--mode", mode, "--shade", shade]);
        ok(&o);
        assert!(stdout(&o).contains("Mrays/s") && stdout(&o).contains("4800 rays"), "{}", stdout(&o));
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 80, "IHDR width");
        assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 60, "IHDR height");
    }
}

/// Names in `dir` (temporary files included).
fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn render_sizes_beyond_png_exit_2_and_leave_no_output() {
    let (dir, scene) = setup();
    let png = dir.path().join("big.png");
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--width", "3000000000", "--height", "10"], &["--width", "image width 3000000000", "2147483647"]),
        (&["--width", "10", "--height", "2147483648"], &["--height", "image height 2147483648", "2147483647"]),
        (&["--width", "0"], &["--width", "image width 0", "2147483647"]),
        (&["--height", "0"], &["--height", "image height 0"]),
        (&["--width", "4294967296"], &["4294967296"]),
    ];
    for (size, needles) in cases {
        let mut args = vec!["render", s(&scene), "-o", s(&png)];
        args.extend_from_slice(size);
        bad(&lanecast(&args), needles);
        assert_eq!(dir_names(dir.path()), ["wall.toml"], "{size:?} left a file");
    }
    // Too large in the scene file's camera: the message names the file.
    let huge = dir.path().join("huge.toml");
    std::fs::write(&huge, WALL_SCENE.replace("width = 64", "width = 3000000000")).unwrap();
    bad(&lanecast(&["render", s(&huge), "-o", s(&png)]), &["huge.toml", "image width 3000000000", "2147483647"]);
    assert!(!png.exists());
}

/// 4 × 50,001 pixels: several bands (the last one odd) streamed into one PNG. Row y looks
/// along (0, v, -1) with v = tan(25°)·(1 - (2y + 1)/H) from (0, 1, 12); it hits the sphere
/// (centre (0, 0, -10), radius 1) when the line passes within 1 of the centre. Normal shading
/// gives the sphere red ≈ 128 (normal x ≈ 0) and the sky red in 166..=190.
#[test]
fn render_tall_narrow_image_streams_a_valid_png() {
    let (dir, scene) = setup();
    let png = dir.path().join("tall.png");
    let (w, h) = (4usize, 50_001usize);
    let o = lanecast(&[
        "render",
        s(&scene),
        "-o",
        s(&png),
        "--width",
        &w.to_string(),
        "--height",
        &h.to_string(),
        "--mode",
        "packet",
    ]);
    ok(&o);
    assert!(stdout(&o).contains("4x50001 200004 rays"), "{}", stdout(&o));
    assert_eq!(dir_names(dir.path()), ["tall.png", "wall.toml"]);
    let f = std::io::BufReader::new(std::fs::File::open(&png).unwrap());
    let mut reader = png::Decoder::new(f).read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgb).unwrap();
    assert_eq!((info.width as usize, info.height as usize), (w, h));
    assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgb, png::BitDepth::Eight));
    let hy = 25f64.to_radians().tan();
    let (mut sphere_rows, mut sky_rows) = (0, 0);
    for y in 0..h {
        let v = hy * (1.0 - (2 * y + 1) as f64 / h as f64);
        // Squared distance from the sphere centre to the line; (c - eye) = (0, -1, -22).
        let along = -v + 22.0;
        let d2 = 485.0 - along * along / (1.0 + v * v);
        for x in 0..w {
            let red = rgb[3 * (y * w + x)];
            if d2 < 0.95 {
                assert!((118..=138).contains(&red), "row {y} col {x}: sphere expected, red {red}");
            } else if d2 > 1.05 {
                assert!(red > 155, "row {y} col {x}: sky expected, red {red}");
            }
        }
        sphere_rows += usize::from(d2 < 0.95);
        sky_rows += usize::from(d2 > 1.05);
    }
    assert!(sphere_rows > 1000 && sky_rows > 40_000, "{sphere_rows} {sky_rows}");
}

#[test]
fn render_to_an_unwritable_place_fails_and_leaves_nothing() {
    let (dir, scene) = setup();
    let missing = dir.path().join("no such dir").join("r.png");
    let o = lanecast(&["render", s(&scene), "-o", s(&missing), "--width", "8", "--height", "8"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(s(&missing)), "{}", stderr(&o));
    let o = lanecast(&["render", s(&scene), "-o", s(dir.path()), "--width", "8", "--height", "8"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    let o = lanecast(&["bench", "--rays", "64", "--json", s(&dir.path().join("no such dir").join("b.json"))]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("b.json"), "{}", stderr(&o));
    assert_eq!(dir_names(dir.path()), ["wall.toml"]);
}

#[test]
fn info_and_bench_report() {
    let o = lanecast(&["info"]);
    ok(&o);
    for key in ["geometries:", "triangles:", "(degenerate:", "bvh nodes:", "sah cost:", "build time:", "memory:"] {
        assert!(stdout(&o).contains(key), "info lacks {key}: {}", stdout(&o));
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let o = lanecast(&["bench", "--rays", "4096", "--json", s(&json)]);
    ok(&o);
    assert!(stdout(&o).starts_with("lanes: "), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["lanes"].is_string() && v["scene"].is_string());
    let rows = v["rows"].as_array().unwrap();
    for q in [
        "ray_sphere",
        "ray_aabb",
        "ray_triangle",
        "ray_triangle_watertight",
        "aabb_triangle_sat",
        "closest_point",
        "closest_coherent",
        "closest_incoherent",
        "occlusion",
    ] {
        assert!(rows.iter().any(|r| r["query"] == q), "no row for {q}");
    }
    for r in rows {
        assert!(
            ["scalar", "x4", "x8", "x16", "packet8", "x8_mt", "packet8_mt"].contains(&r["backend"].as_str().unwrap())
        );
        assert!(r["threads"].as_u64().unwrap() >= 1);
        assert!(r["mrays_per_s"].as_f64().unwrap() > 0.0 && r["vs_scalar"].as_f64().unwrap() > 0.0);
    }
    // Kernels run at every width; ray queries on the 16-wide tree too, closest points and
    // sweeps up to 8 lanes (x16 runs them as x8 does).
    assert!(rows.iter().any(|r| r["query"] == "ray_triangle" && r["backend"] == "x16"), "no x16 kernel row");
    for q in ["closest_coherent", "closest_incoherent", "occlusion"] {
        assert!(rows.iter().any(|r| r["query"] == q && r["backend"] == "x16"), "no x16 row for {q}");
    }
    assert!(!rows.iter().any(|r| r["query"] == "closest_point" && r["backend"] == "x16"));
    // The watertight default against the Möller–Trumbore opt-in, on the same scene.
    for q in ["closest_coherent", "closest_incoherent", "occlusion"] {
        assert!(rows.iter().any(|r| r["query"] == q && r["backend"] == "x8_mt"), "no x8_mt row for {q}");
    }
}

#[test]
fn bad_ray_files_exit_2_and_leave_no_output() {
    let (dir, scene) = setup();
    let out = dir.path().join("hits.csv");
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("malformed.csv", b"0,1,0,1,0,0\n0,1,0,abc,0,0\n".to_vec(), vec!["malformed.csv", "line 2"]),
        ("columns.csv", b"0,1,0,1,0,0\n0,1,0,1,0\n".to_vec(), vec!["columns.csv", "line 2"]),
        ("short.bin", f32_bytes(&[0.0; 9]), vec!["short.bin", "4"]),
        ("dtype.npy", npy("<f8", "(1, 8)", &[0u8; 64]), vec!["dtype.npy", "header"]),
        ("shape.npy", npy("<f4", "(1, 7)", &[0u8; 28]), vec!["shape.npy", "header"]),
        ("order.npy", npy("<f4", "(1, 8)", &[0u8; 32]), vec!["order.npy:header:", "fortran_order"]),
    ];
    for (name, bytes, needles) in cases {
        let mut bytes = bytes;
        if name == "order.npy" {
            // In place, bytes not text: the magic's first byte is not UTF-8.
            let at = bytes.windows(5).position(|w| w == b"False").expect("a C-order header");
            bytes[at..at + 5].copy_from_slice(b"True ");
        }
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let o = lanecast(&["cast", s(&scene), "--rays", s(&p), "--out", s(&out)]);
        bad(&o, &needles);
        assert!(!out.exists(), "{name}: a failed run left {}", out.display());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{name}: temporary files left behind: {leftovers:?}");
    }
    bad(&lanecast(&["cast", s(&scene), "--rays", s(&dir.path().join("missing.csv"))]), &["missing.csv"]);
    bad(&lanecast(&["los", s(&scene), "--segments", s(&dir.path().join("missing.bin"))]), &["missing.bin"]);
}

#[test]
fn bad_scenes_exit_2_naming_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("unknown_key.toml", "[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\ncolour = 3\n", "unknown_key.toml:4:"),
        ("negative.toml", "[[sphere]]\ncenter = [0, 0, 0]\nradius = -1\n", "negative.toml:3:"),
        ("box.toml", "[[box]]\nmin = [1, 1, 1]\nmax = [0, 2, 2]\n", "box.toml:"),
        ("normal.toml", "[[plane]]\nnormal = [0, 0, 0]\nd = 1\n", "normal.toml:"),
        ("mesh.toml", "[[mesh]]\npath = \"nowhere.obj\"\n", "nowhere.obj"),
        ("camera.toml", "[camera]\neye = [0, 0, 0]\nlook_at = [0, 0, 0]\nfov_y_deg = 45\n", "camera.toml:"),
        ("syntax.toml", "[[sphere]\ncenter = 1\n", "syntax.toml:1:"),
    ];
    for (name, text, needle) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        bad(&lanecast(&["info", s(&p)]), &[needle]);
        let png = dir.path().join("r.png");
        bad(&lanecast(&["render", s(&p), "-o", s(&png)]), &[name]);
        assert!(!png.exists());
    }
    bad(&lanecast(&["info", s(&dir.path().join("absent.toml"))]), &["absent.toml"]);
}

#[test]
fn zero_threads_is_refused_before_anything_is_written() {
    // Checked as the arguments are parsed: no csv header on stdout, no output file.
    let (dir, scene) = setup();
    let segments = dir.path().join("s.csv");
    std::fs::write(&segments, "0,1,0,9,1,0\n").unwrap();
    let o = lanecast(&["los", s(&scene), "--segments", s(&segments), "--threads", "0"]);
    bad(&o, &["--threads", "0"]);
    assert!(o.stdout.is_empty(), "stdout: {:?}", stdout(&o));
    let out = dir.path().join("v.csv");
    let o = lanecast(&["los", s(&scene), "--segments", s(&segments), "--threads", "0", "--out", s(&out)]);
    bad(&o, &["--threads"]);
    assert!(!out.exists());
    // One thread is fine.
    let o = lanecast(&["los", s(&scene), "--segments", s(&segments), "--threads", "1"]);
    ok(&o);
    assert_eq!(stdout(&o), "visible\n0\n");
}

#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_file_behind() {
    // A render far too large to finish, interrupted once its temporary output file exists, by
    // each signal the handler takes (SIGINT is what Ctrl-C sends): the handler deletes the
    // file and exits with 130.
    /// Kills the render if an assertion fails before the signal is sent.
    struct Render(std::process::Child);
    impl Drop for Render {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    for signal in ["INT", "TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("big.png");
        let mut render = Render(
            Command::new(env!("CARGO_BIN_EXE_lanecast"))
                .args(["render", "--width", "30000", "--height", "30000", "-o", s(&out)])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run lanecast"),
        );
        let names = || -> Vec<String> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        // Not a timing: a bound on waiting for the file, so that a broken build fails instead
        // of hanging.
        let start = std::time::Instant::now();
        while names().is_empty() {
            assert!(start.elapsed().as_secs() < 120, "SIG{signal}: no temporary file appeared");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(names()[0].starts_with(".big.png.tmp-"), "{:?}", names());
        let kill = Command::new("kill").args([&format!("-{signal}"), &render.0.id().to_string()]).status();
        assert!(kill.expect("run kill").success());
        let status = render.0.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut render.0.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}: status {status:?}, stderr: {err}");
        assert!(err.contains("interrupted"), "SIG{signal}: {err}");
        assert_eq!(names(), Vec::<String>::new(), "SIG{signal}");
    }
}
