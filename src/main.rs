//! The `lanecast` command: render, cast, los, count, inside, closest, bench and info over
//! TOML scenes (see the README). Thin: parses arguments, calls the library, prints. Exit codes: 0 success,
//! 2 bad input (the message names the file and place), 1 anything else.

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use lanecast::io::{
    AllHitsWriter, AtomicFile, ClosestWriter, CountWriter, FlagWriter, Format, HitWriter, InputKind, IoError,
    PointReader, RayReader, VisWriter,
};
use lanecast::render::{self, Axis, Mode, RenderError, Shade};
use lanecast::scene::file::{SceneFile, default_scene, load_scene_file};
use lanecast::{Backend, ClosestPoint, HitSoa, Scene, TriangleTest, bench};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "lanecast", version, about = "SoA ray casting, 4/8 lanes at a time")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Render a PNG: one primary ray per pixel.
    Render(RenderArgs),
    /// Closest hit for every ray of a file (every hit with --all).
    Cast(CastArgs),
    /// Line of sight for every segment of a file (1 = visible).
    Los(LosArgs),
    /// Number of hits along every ray of a file.
    Count(CountArgs),
    /// Whether every point of a file is inside the scene's solids (1 = inside).
    Inside(InsideArgs),
    /// Closest surface point of the scene to every point of a file.
    Closest(ClosestArgs),
    /// Kernel and scene-query throughput table (scalar vs x4 vs x8).
    Bench(BenchArgs),
    /// Scene facts: counts, bounds, BVH shape, build time, memory.
    Info(InfoArgs),
}

#[derive(Args)]
struct SceneArg {
    /// Scene file (TOML); the built-in default scene when omitted.
    scene: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Scalar,
    X4,
    X8,
    Auto,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Scalar => Backend::Scalar,
            BackendArg::X4 => Backend::X4,
            BackendArg::X8 => Backend::X8,
            BackendArg::Auto => Backend::Auto,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Csv,
    Bin,
    Npy,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Csv => Format::Csv,
            FormatArg::Bin => Format::Bin,
            FormatArg::Npy => Format::Npy,
        }
    }
}

#[derive(Args)]
struct RenderArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Output PNG.
    #[arg(short, long, default_value = "render.png")]
    output: PathBuf,
    /// Image width (default: the scene camera's).
    #[arg(long)]
    width: Option<u32>,
    /// Image height (default: the scene camera's).
    #[arg(long)]
    height: Option<u32>,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// single: one ray at a time; packet: 2x4-pixel packets of 8 rays.
    #[arg(long, value_enum, default_value = "single")]
    mode: ModeArg,
    #[arg(long, value_enum, default_value = "normal")]
    shade: ShadeArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Single,
    Packet,
}

#[derive(Clone, Copy, ValueEnum)]
enum ShadeArg {
    Normal,
    Depth,
    Ao,
}

#[derive(Args)]
struct QueryOpts {
    /// Output file (`-` or omitted: csv on stdout).
    #[arg(long)]
    out: Option<String>,
    /// File format of input and output, overriding their extensions.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Args)]
struct CastArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Rays: csv `ox,oy,oz,dx,dy,dz[,tmin,tmax]`, .bin (8 f32), .npy (N,8)/(N,6).
    #[arg(long)]
    rays: String,
    /// Every hit of every ray, one row per hit led by the ray's index (no row for a miss).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    opts: QueryOpts,
}

#[derive(Args)]
struct CountArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Rays: csv `ox,oy,oz,dx,dy,dz[,tmin,tmax]`, .bin (8 f32), .npy (N,8)/(N,6).
    #[arg(long)]
    rays: String,
    #[command(flatten)]
    opts: QueryOpts,
}

#[derive(Args)]
struct InsideArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Points: csv `x,y,z`, .bin (3 f32), .npy (N,3); every coordinate finite.
    #[arg(long)]
    points: String,
    #[command(flatten)]
    opts: QueryOpts,
}

#[derive(Args)]
struct ClosestArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Points: csv `x,y,z`, .bin (3 f32), .npy (N,3); every coordinate finite.
    #[arg(long)]
    points: String,
    /// Negative distances for points inside the scene's solids (as `inside` decides).
    #[arg(long)]
    signed: bool,
    #[command(flatten)]
    opts: QueryOpts,
}

#[derive(Args)]
struct LosArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Segments: csv `ax,ay,az,bx,by,bz`, .bin (6 f32), .npy (N,6).
    #[arg(long)]
    segments: String,
    #[command(flatten)]
    opts: QueryOpts,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Rays per scene query set.
    #[arg(long, default_value_t = 1 << 18)]
    rays: usize,
    /// Also write the table as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct InfoArgs {
    #[command(flatten)]
    scene: SceneArg,
}

/// A failure: bad input exits with 2, anything else with 1.
enum Fail {
    BadInput(String),
    Other(String),
}

impl From<lanecast::SceneError> for Fail {
    fn from(e: lanecast::SceneError) -> Self {
        Fail::BadInput(e.to_string())
    }
}

fn bad_input(e: IoError) -> Fail {
    Fail::BadInput(e.to_string())
}
fn other(e: impl std::fmt::Display) -> Fail {
    Fail::Other(e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Render(a) => cmd_render(a),
        Cmd::Cast(a) => cmd_cast(a),
        Cmd::Los(a) => cmd_los(a),
        Cmd::Count(a) => cmd_count(a),
        Cmd::Inside(a) => cmd_inside(a),
        Cmd::Closest(a) => cmd_closest(a),
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::Info(a) => cmd_info(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::BadInput(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(Fail::Other(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// A spinner or bar on stderr when it is a terminal; hidden otherwise.
fn progress(len: Option<u64>, msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = match len {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
                .expect("template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner(),
    };
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

struct Loaded {
    scene: Scene,
    file: SceneFile,
    name: String,
}

fn load(arg: &SceneArg) -> Result<Loaded, Fail> {
    load_keeping(arg, false).map(|(l, _)| l)
}

/// [`load`], and with `keep` also the scene built with the Möller–Trumbore opt-in (for the
/// bench's comparison rows).
fn load_keeping(arg: &SceneArg, keep: bool) -> Result<(Loaded, Option<Scene>), Fail> {
    let pb = progress(None, "loading scene");
    let (mut file, name) = match &arg.scene {
        Some(p) => (load_scene_file(p)?, p.display().to_string()),
        None => (default_scene(), "default (built in)".to_string()),
    };
    pb.set_message("building BVH");
    let builder = std::mem::take(&mut file.builder);
    let mt = if keep { Some(builder.clone().triangle_test(TriangleTest::MollerTrumbore).build()?) } else { None };
    let scene = builder.build()?;
    pb.finish_and_clear();
    Ok((Loaded { scene, file, name }, mt))
}

fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, Fail> {
    match threads {
        None => Ok(f()),
        Some(0) => Err(Fail::BadInput("--threads must be at least 1".into())),
        Some(n) => Ok(rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(other)?.install(f)),
    }
}

fn input_format(path: &str, flag: Option<FormatArg>) -> Result<Format, Fail> {
    Format::resolve(path, flag.map(Format::from)).map_err(bad_input)
}

fn output_format(path: &str, flag: Option<FormatArg>) -> Result<Format, Fail> {
    if path == "-" {
        return match flag {
            None | Some(FormatArg::Csv) => Ok(Format::Csv),
            _ => Err(Fail::BadInput("standard output takes csv only".into())),
        };
    }
    input_format(path, flag)
}

const CHUNK: usize = 1 << 16;

/// Rays per chunk of `cast --all`: every hit of a chunk is held at once, so chunks are
/// smaller than for one record per ray.
const ALL_CHUNK: usize = 1 << 12;

/// Rays a hit-list file can number (its `ray` column is a u32).
const MAX_LISTED_RAYS: u64 = 1 << 32;

fn cmd_render(a: RenderArgs) -> Result<(), Fail> {
    // Sizes from the command line are checked before anything is loaded.
    for (flag, axis, value) in [("--width", Axis::Width, a.width), ("--height", Axis::Height, a.height)] {
        if let Some(v) = value {
            render::check_dimension(axis, v).map_err(|e| Fail::BadInput(format!("{flag}: {e}")))?;
        }
    }
    let l = load(&a.scene)?;
    let mut cam = l.file.camera.unwrap_or_else(|| bench::fallback_camera(&l.scene));
    cam.width = a.width.unwrap_or(cam.width);
    cam.height = a.height.unwrap_or(cam.height);
    let source = if a.width.is_some() && a.height.is_some() { "--width/--height" } else { l.name.as_str() };
    render::check_size(cam.width, cam.height).map_err(|e| Fail::BadInput(format!("{source}: {e}")))?;
    cam.check().map_err(|m| Fail::BadInput(format!("{}: {m}", l.name)))?;
    let mode = match a.mode {
        ModeArg::Single => Mode::Single,
        ModeArg::Packet => Mode::Packet,
    };
    let shade = match a.shade {
        ShadeArg::Normal => Shade::Normal,
        ShadeArg::Depth => Shade::Depth,
        ShadeArg::Ao => Shade::Ao,
    };
    let pb = progress(Some(u64::from(cam.height)), "rendering rows");
    let start = Instant::now();
    let rays = render::render_png_to(&a.output, &l.scene, &cam, a.backend.into(), mode, shade, |rows| {
        pb.set_position(u64::from(rows));
        true
    })
    .map_err(|e| match e {
        RenderError::Dimension { .. } | RenderError::TooManyBytes { .. } | RenderError::Camera(_) => {
            Fail::BadInput(format!("{}: {e}", l.name))
        }
        _ => other(e),
    })?;
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    println!(
        "{}: {}x{} {} rays in {:.3} s, {:.2} Mrays/s (primary rays; shading {:?}, mode {:?}, backend {})",
        a.output.display(),
        cam.width,
        cam.height,
        rays,
        secs,
        rays as f64 / secs / 1e6,
        shade,
        mode,
        Backend::from(a.backend).resolve().name()
    );
    Ok(())
}

fn cmd_cast(a: CastArgs) -> Result<(), Fail> {
    if a.all {
        return cmd_cast_all(a);
    }
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.rays, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = RayReader::open(&a.rays, fmt_in, InputKind::Rays).map_err(bad_input)?;
    let mut writer = HitWriter::create(&out, fmt_out).map_err(other)?;
    let pb = progress(reader.total(), "casting");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        let mut hits = HitSoa::default();
        while let Some(rays) = reader.next_chunk(CHUNK).map_err(bad_input)? {
            l.scene.intersect_batch_with(&rays, &mut hits, backend);
            writer.write(&hits).map_err(other)?;
            pb.inc(rays.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

/// `cast --all`: every hit, one row per hit, led by the ray index.
fn cmd_cast_all(a: CastArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.rays, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = RayReader::open(&a.rays, fmt_in, InputKind::Rays).map_err(bad_input)?;
    if let Some(n) = reader.total().filter(|&n| n > MAX_LISTED_RAYS) {
        return Err(Fail::BadInput(format!(
            "{}: {n} rays: cast --all numbers rays with a u32 (at most {MAX_LISTED_RAYS} rays)",
            reader.name()
        )));
    }
    let mut writer = AllHitsWriter::create(&out, fmt_out).map_err(other)?;
    let pb = progress(reader.total(), "casting (all hits)");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        loop {
            let first = reader.position();
            let Some(rays) = reader.next_chunk(ALL_CHUNK).map_err(bad_input)? else { break };
            if reader.position() > MAX_LISTED_RAYS {
                return Err(Fail::BadInput(format!(
                    "{}: ray {MAX_LISTED_RAYS}: cast --all numbers rays with a u32 (at most {MAX_LISTED_RAYS} rays)",
                    reader.name()
                )));
            }
            let lists = l.scene.intersect_all_batch_with(&rays, backend);
            writer.write(first, &lists).map_err(other)?;
            pb.inc(rays.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

fn cmd_count(a: CountArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.rays, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = RayReader::open(&a.rays, fmt_in, InputKind::Rays).map_err(bad_input)?;
    let mut writer = CountWriter::create(&out, fmt_out).map_err(other)?;
    let pb = progress(reader.total(), "counting");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        let mut counts = Vec::new();
        while let Some(rays) = reader.next_chunk(CHUNK).map_err(bad_input)? {
            counts.resize(rays.len(), 0);
            l.scene.count_intersections_batch_with(&rays, &mut counts, backend);
            writer.write(&counts).map_err(other)?;
            pb.inc(rays.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

fn cmd_inside(a: InsideArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.points, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = PointReader::open(&a.points, fmt_in).map_err(bad_input)?;
    let mut writer = FlagWriter::create(&out, fmt_out, "inside").map_err(other)?;
    let pb = progress(reader.total(), "inside");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        let mut inside = Vec::new();
        while let Some(points) = reader.next_chunk(CHUNK).map_err(bad_input)? {
            inside.resize(points.len(), false);
            l.scene.contains_batch_with(&points, &mut inside, backend);
            writer.write(&inside).map_err(other)?;
            pb.inc(points.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

fn cmd_closest(a: ClosestArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.points, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = PointReader::open(&a.points, fmt_in).map_err(bad_input)?;
    let mut writer = ClosestWriter::create(&out, fmt_out).map_err(other)?;
    let pb = progress(reader.total(), "closest points");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        let mut closest = Vec::new();
        let mut inside = Vec::new();
        while let Some(points) = reader.next_chunk(CHUNK).map_err(bad_input)? {
            closest.resize(points.len(), ClosestPoint::MISS);
            l.scene.closest_point_batch_with(&points, &mut closest, backend);
            if a.signed {
                // Negative inside the scene's solids, as `inside` decides it (0 stays +0).
                inside.resize(points.len(), false);
                l.scene.contains_batch_with(&points, &mut inside, backend);
                for (c, &inside) in closest.iter_mut().zip(&inside) {
                    if inside && c.distance > 0.0 {
                        c.distance = -c.distance;
                    }
                }
            }
            writer.write(&closest).map_err(other)?;
            pb.inc(points.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

fn cmd_los(a: LosArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let fmt_in = input_format(&a.segments, a.opts.format)?;
    let out = a.opts.out.clone().unwrap_or_else(|| "-".into());
    let fmt_out = output_format(&out, a.opts.format)?;
    let mut reader = RayReader::open(&a.segments, fmt_in, InputKind::Segments).map_err(bad_input)?;
    let mut writer = VisWriter::create(&out, fmt_out).map_err(other)?;
    let pb = progress(reader.total(), "line of sight");
    let backend: Backend = a.opts.backend.into();
    with_threads(a.opts.threads, || -> Result<(), Fail> {
        let mut blocked = Vec::new();
        while let Some(mut segs) = reader.next_chunk(CHUNK).map_err(bad_input)? {
            Scene::segments_to_los(&mut segs);
            blocked.resize(segs.len(), false);
            l.scene.occluded_batch_with(&segs, &mut blocked, backend);
            let visible: Vec<bool> = blocked.iter().map(|b| !b).collect();
            writer.write(&visible).map_err(other)?;
            pb.inc(segs.len() as u64);
        }
        Ok(())
    })??;
    writer.finish().map_err(other)?;
    pb.finish_and_clear();
    Ok(())
}

fn cmd_bench(a: BenchArgs) -> Result<(), Fail> {
    if a.rays == 0 {
        return Err(Fail::BadInput("--rays must be at least 1".into()));
    }
    let (l, mt) = load_keeping(&a.scene, true)?;
    let report = bench::run(&l.scene, mt.as_ref(), &l.name, l.file.camera.as_ref(), a.rays, Duration::from_millis(300));
    print!("{}", report.to_text());
    if let Some(path) = a.json {
        let text = serde_json::to_string_pretty(&report).map_err(other)?;
        let mut file = AtomicFile::create(&path).map_err(other)?;
        file.write_all(text.as_bytes()).map_err(other)?;
        file.finish().map_err(other)?;
    }
    Ok(())
}

fn cmd_info(a: InfoArgs) -> Result<(), Fail> {
    let l = load(&a.scene)?;
    let s = l.scene.stats();
    let b = l.scene.bounds();
    println!("scene:       {}", l.name);
    println!("geometries:  {}", s.geoms);
    println!("triangles:   {} (degenerate: {})", s.triangles, s.degenerate);
    println!("spheres:     {}", s.spheres);
    println!("boxes:       {}", s.boxes);
    println!("planes:      {}", s.planes);
    if b.min.x <= b.max.x {
        println!("bounds:      min {:?} max {:?}", b.min.to_array(), b.max.to_array());
    } else {
        println!("bounds:      empty");
    }
    println!("bvh nodes:   {} binary, {} 8-wide; leaves {}; depth {}", s.nodes2, s.nodes8, s.leaves, s.depth);
    println!("sah cost:    {:.2}", s.sah_cost);
    println!("build time:  {:.1} ms", s.build_time.as_secs_f64() * 1e3);
    println!(
        "memory:      {} bytes in all; {} bytes for the 8-wide traversal (nodes, primitives, ids)",
        s.bytes, s.bytes_x8
    );
    if let Some(c) = l.file.camera {
        println!(
            "camera:      eye {:?} look_at {:?} fov {} {}x{}",
            c.eye.to_array(),
            c.look_at.to_array(),
            c.fov_y_deg,
            c.width,
            c.height
        );
    }
    Ok(())
}
