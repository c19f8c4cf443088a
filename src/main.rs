//! The `lanecast` command: render, cast, los, count, inside, closest, sweep, bench and info over
//! TOML scenes (see the README). Thin: parses arguments, calls the library, prints. Exit codes: 0 success,
//! 2 bad input (the message names the file and place), 1 anything else.

use clap::{Args, Parser, Subcommand, ValueEnum};
use glam::Vec3;
use indicatif::{ProgressBar, ProgressStyle};
use lanecast::io::{
    AllHitsWriter, AtomicFile, ClosestWriter, CountWriter, FlagWriter, Format, HitWriter, InputKind, IoError,
    PointReader, RayReader, SweepReader, SweepWriter, VisWriter,
};
use lanecast::render::{self, Axis, Mode, RenderError, Shade};
use lanecast::scene::file::{SceneFile, default_scene, load_scene_file};
use lanecast::{Backend, ClosestPoint, HitSoa, RaySoa, Scene, SphereSweep, SweepHit, TriangleTest, bench};
use std::io::IsTerminal;
use std::num::NonZeroUsize;
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
    /// First contact of every moving sphere of a file with the scene (continuous collision).
    Sweep(SweepArgs),
    /// Kernel and scene-query throughput table (scalar vs x4 vs x8 vs x16).
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
    X16,
    Auto,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Scalar => Backend::Scalar,
            BackendArg::X4 => Backend::X4,
            BackendArg::X8 => Backend::X8,
            BackendArg::X16 => Backend::X16,
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
    // Non-zero by type: clap rejects `0` (exit 2) as it parses, before any output is written.
    #[arg(long)]
    threads: Option<NonZeroUsize>,
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
struct SweepArgs {
    #[command(flatten)]
    scene: SceneArg,
    /// Moving spheres: csv `cx,cy,cz,r,mx,my,mz` (centre, radius, motion), .bin (7 f32),
    /// .npy (N,7); every number finite, radii >= 0. Output: `toi,geom,prim,inst,px,py,pz,nx,ny,nz`.
    #[arg(long)]
    spheres: String,
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
    // Ctrl-C, SIGTERM or SIGHUP end the process without running destructors: delete the
    // unfinished outputs' temporary files first, so an interrupted run leaves no file behind.
    // Where the handler cannot be installed, runs work as before, without that clean-up.
    let _ = ctrlc::set_handler(|| {
        lanecast::io::remove_unfinished();
        eprintln!("error: interrupted (unfinished output files removed)");
        std::process::exit(130);
    });
    let result = match cli.cmd {
        Cmd::Render(a) => cmd_render(a),
        Cmd::Cast(a) => cmd_cast(a),
        Cmd::Los(a) => cmd_los(a),
        Cmd::Count(a) => cmd_count(a),
        Cmd::Inside(a) => cmd_inside(a),
        Cmd::Closest(a) => cmd_closest(a),
        Cmd::Sweep(a) => cmd_sweep(a),
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

fn with_threads<T: Send>(threads: Option<NonZeroUsize>, f: impl FnOnce() -> T + Send) -> Result<T, Fail> {
    match threads {
        None => Ok(f()),
        Some(n) => Ok(rayon::ThreadPoolBuilder::new().num_threads(n.get()).build().map_err(other)?.install(f)),
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

/// A record file read in chunks: rays or segments ([`RayReader`]) or points ([`PointReader`]).
trait Input {
    type Chunk;
    fn total(&self) -> Option<u64>;
    fn position(&self) -> u64;
    fn name(&self) -> &str;
    fn next_chunk(&mut self, max: usize) -> Result<Option<Self::Chunk>, IoError>;
}

macro_rules! impl_input {
    ($reader:ty, $chunk:ty) => {
        impl Input for $reader {
            type Chunk = $chunk;
            fn total(&self) -> Option<u64> {
                <$reader>::total(self)
            }
            fn position(&self) -> u64 {
                <$reader>::position(self)
            }
            fn name(&self) -> &str {
                <$reader>::name(self)
            }
            fn next_chunk(&mut self, max: usize) -> Result<Option<$chunk>, IoError> {
                <$reader>::next_chunk(self, max)
            }
        }
    };
}
impl_input!(RayReader, RaySoa);
impl_input!(PointReader, Vec<Vec3>);
impl_input!(SweepReader, Vec<SphereSweep>);

/// An answer file, moved into place by `finish` (nothing is left behind on a failure).
trait Output {
    fn finish(self) -> Result<(), IoError>;
}

macro_rules! impl_output {
    ($($writer:ty),*) => {$(
        impl Output for $writer {
            fn finish(self) -> Result<(), IoError> {
                <$writer>::finish(self)
            }
        }
    )*};
}
impl_output!(HitWriter, AllHitsWriter, CountWriter, FlagWriter, ClosestWriter, SweepWriter, VisWriter);

/// What one chunk's answer is computed from.
struct Chunk<'a, C> {
    scene: &'a Scene,
    backend: Backend,
    /// Index of the chunk's first record in the input.
    first: u64,
    records: C,
}

/// One streaming query command: `--rays`/`--points`/`--segments` file, `opts`, progress
/// label, records per chunk, and an optional cap on the number of records.
struct Stream<'a> {
    scene: &'a SceneArg,
    input: &'a str,
    opts: &'a QueryOpts,
    label: &'static str,
    chunk: usize,
    /// At most this many records, and why (checked up front where the file tells its size).
    limit: Option<(u64, &'static str)>,
}

impl Stream<'_> {
    fn new<'a>(scene: &'a SceneArg, input: &'a str, opts: &'a QueryOpts, label: &'static str) -> Stream<'a> {
        Stream { scene, input, opts, label, chunk: CHUNK, limit: None }
    }

    /// Loads the scene, opens the input with `open` and the output with `create` (csv on
    /// stdout without `--out`), then answers chunk after chunk with `answer` on the chosen
    /// thread pool, and finally moves the output into place.
    fn run<R: Input + Send, W: Output + Send>(
        self,
        open: impl FnOnce(&str, Format) -> Result<R, IoError>,
        create: impl FnOnce(&str, Format) -> Result<W, IoError>,
        mut answer: impl FnMut(Chunk<'_, R::Chunk>, &mut W) -> Result<(), IoError> + Send,
    ) -> Result<(), Fail> {
        let l = load(self.scene)?;
        let fmt_in = input_format(self.input, self.opts.format)?;
        let out = self.opts.out.clone().unwrap_or_else(|| "-".into());
        let fmt_out = output_format(&out, self.opts.format)?;
        let mut reader = open(self.input, fmt_in).map_err(bad_input)?;
        let over = |reader: &R, n: u64| match self.limit {
            Some((max, why)) if n > max => {
                Err(Fail::BadInput(format!("{}: {n} records: {why} (at most {max})", reader.name())))
            }
            _ => Ok(()),
        };
        if let Some(n) = reader.total() {
            over(&reader, n)?;
        }
        let mut writer = create(&out, fmt_out).map_err(other)?;
        let pb = progress(reader.total(), self.label);
        let backend: Backend = self.opts.backend.into();
        with_threads(self.opts.threads, || -> Result<(), Fail> {
            loop {
                let first = reader.position();
                let Some(records) = reader.next_chunk(self.chunk).map_err(bad_input)? else { break };
                over(&reader, reader.position())?;
                answer(Chunk { scene: &l.scene, backend, first, records }, &mut writer).map_err(other)?;
                pb.set_position(reader.position());
            }
            Ok(())
        })??;
        writer.finish().map_err(other)?;
        pb.finish_and_clear();
        Ok(())
    }
}

fn cmd_cast(a: CastArgs) -> Result<(), Fail> {
    let s = Stream::new(&a.scene, &a.rays, &a.opts, "casting");
    let open = |p: &str, f| RayReader::open(p, f, InputKind::Rays);
    if a.all {
        // Every hit, one row per hit led by the ray index; a chunk's hits are held at once,
        // so chunks are smaller than for one record per ray.
        let s = Stream { chunk: ALL_CHUNK, limit: Some((MAX_LISTED_RAYS, "cast --all numbers rays with a u32")), ..s };
        return s.run(open, AllHitsWriter::create, |c, w| {
            w.write(c.first, &c.scene.intersect_all_batch_with(&c.records, c.backend))
        });
    }
    let mut hits = HitSoa::default();
    s.run(open, HitWriter::create, |c, w| {
        c.scene.intersect_batch_with(&c.records, &mut hits, c.backend);
        w.write(&hits)
    })
}

fn cmd_count(a: CountArgs) -> Result<(), Fail> {
    let mut counts = Vec::new();
    Stream::new(&a.scene, &a.rays, &a.opts, "counting").run(
        |p, f| RayReader::open(p, f, InputKind::Rays),
        CountWriter::create,
        |c, w| {
            counts.resize(c.records.len(), 0);
            c.scene.count_intersections_batch_with(&c.records, &mut counts, c.backend);
            w.write(&counts)
        },
    )
}

fn cmd_inside(a: InsideArgs) -> Result<(), Fail> {
    let mut inside = Vec::new();
    Stream::new(&a.scene, &a.points, &a.opts, "inside").run(
        PointReader::open,
        |p, f| FlagWriter::create(p, f, "inside"),
        |c, w| {
            inside.resize(c.records.len(), false);
            c.scene.contains_batch_with(&c.records, &mut inside, c.backend);
            w.write(&inside)
        },
    )
}

fn cmd_sweep(a: SweepArgs) -> Result<(), Fail> {
    let mut hits = Vec::new();
    Stream::new(&a.scene, &a.spheres, &a.opts, "sweeping").run(SweepReader::open, SweepWriter::create, |c, w| {
        hits.resize(c.records.len(), SweepHit::MISS);
        c.scene.sweep_batch_with(&c.records, &mut hits, c.backend);
        w.write(&hits)
    })
}

fn cmd_closest(a: ClosestArgs) -> Result<(), Fail> {
    let mut closest = Vec::new();
    Stream::new(&a.scene, &a.points, &a.opts, "closest points").run(PointReader::open, ClosestWriter::create, |c, w| {
        closest.resize(c.records.len(), ClosestPoint::MISS);
        if a.signed {
            c.scene.signed_closest_point_batch_with(&c.records, &mut closest, c.backend);
        } else {
            c.scene.closest_point_batch_with(&c.records, &mut closest, c.backend);
        }
        w.write(&closest)
    })
}

fn cmd_los(a: LosArgs) -> Result<(), Fail> {
    let (mut blocked, mut visible) = (Vec::new(), Vec::new());
    Stream::new(&a.scene, &a.segments, &a.opts, "line of sight").run(
        |p, f| RayReader::open(p, f, InputKind::Segments),
        VisWriter::create,
        |mut c, w| {
            Scene::segments_to_los(&mut c.records);
            blocked.resize(c.records.len(), false);
            c.scene.occluded_batch_with(&c.records, &mut blocked, c.backend);
            visible.clear();
            visible.extend(blocked.iter().map(|b| !b));
            w.write(&visible)
        },
    )
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
    println!(
        "bvh nodes:   {} binary, {} 8-wide (0 until made); leaves {}; depth {}",
        s.nodes2, s.nodes8, s.leaves, s.depth
    );
    println!("sah cost:    {:.2}", s.sah_cost);
    println!("build time:  {:.1} ms", s.build_time.as_secs_f64() * 1e3);
    println!("memory:      {} bytes in all (the trees made so far, primitives, ids)", s.bytes);
    for (w, b) in [("8", s.bytes_x8), ("16", s.bytes_x16)] {
        if let Some(b) = b {
            println!("             {b} bytes for the {w}-wide traversal (nodes, primitives, ids)");
        }
    }
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
