//! Draws one row of the contention sweep as an SVG chart: throughput against
//! the number of threads for one cell (critical section, outside work), one
//! line each for metalock's raw word and `Synchronized`,
//! `parking_lot::Mutex` and `std::sync::Mutex`.
//!
//! ```text
//! cargo run --release --example compare   # writes target/contention-sweep.csv
//! cargo run --release --example plot      # writes docs/contention.svg
//! cargo run --release --example plot -- [CSV] [--cs NS] [--outside NS] [--out SVG]
//! ```
//!
//! The cell defaults to a ~20 ns critical section with ~200 ns of work
//! outside; `--cs` and `--outside` take the nanoseconds of the CSV's
//! `cs_ns` and `outside_ns` columns. The SVG is written by hand (no
//! dependency): axes, ticks, a legend, a title naming the cell, and under
//! it the CSV's comment lines (`compare` writes the CPU model and the date
//! of the run there).

use std::path::PathBuf;
use std::process::ExitCode;

/// What `compare` writes, and where the chart goes, relative to the crate.
const DEFAULT_CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/contention-sweep.csv");
const DEFAULT_SVG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/contention.svg");

/// A line of the chart: the CSV's lock name, its label, and how it is drawn
/// (Okabe-Ito colours, told apart without colour by the dashes and markers).
struct Style {
    lock: &'static str,
    label: &'static str,
    colour: &'static str,
    dash: &'static str,
    marker: Marker,
}

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Diamond,
    Triangle,
}

const LINES: [Style; 4] = [
    Style {
        lock: "metalock_word",
        label: "metalock word",
        colour: "#0072B2",
        dash: "",
        marker: Marker::Circle,
    },
    Style {
        lock: "metalock_sync",
        label: "metalock Synchronized",
        colour: "#56B4E9",
        dash: "7 4",
        marker: Marker::Square,
    },
    Style {
        lock: "parking_lot",
        label: "parking_lot::Mutex",
        colour: "#009E73",
        dash: "",
        marker: Marker::Diamond,
    },
    Style {
        lock: "std",
        label: "std::sync::Mutex",
        colour: "#D55E00",
        dash: "2 3",
        marker: Marker::Triangle,
    },
];

struct Args {
    csv: PathBuf,
    cs_ns: u32,
    outside_ns: u32,
    out: PathBuf,
}

const USAGE: &str = "usage: plot [CSV] [--cs NS] [--outside NS] [--out SVG]";

impl Args {
    /// The command line's arguments; `None` for `--help`.
    fn parse() -> Result<Option<Self>, String> {
        let mut args = Self {
            csv: PathBuf::from(DEFAULT_CSV),
            cs_ns: 20,
            outside_ns: 200,
            out: PathBuf::from(DEFAULT_SVG),
        };
        let mut csv_given = false;
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
            match arg.as_str() {
                "--cs" => args.cs_ns = parse_ns(&value("--cs")?)?,
                "--outside" => args.outside_ns = parse_ns(&value("--outside")?)?,
                "--out" => args.out = PathBuf::from(value("--out")?),
                "-h" | "--help" => return Ok(None),
                path if !path.starts_with('-') && !csv_given => {
                    args.csv = PathBuf::from(path);
                    csv_given = true;
                }
                other => return Err(format!("unexpected argument {other:?}")),
            }
        }
        Ok(Some(args))
    }
}

fn parse_ns(text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a number of nanoseconds"))
}

/// One point of a line.
#[derive(Clone, Copy)]
struct Point {
    threads: f64,
    mops: f64,
}

/// A line's points, in thread order.
struct Series<'a> {
    style: &'a Style,
    points: Vec<Point>,
}

/// What a sweep's CSV says about where its figures come from: its leading
/// `#` comment lines (`compare` writes the CPU model and the date there).
fn provenance(csv: &str) -> Vec<&str> {
    csv.lines()
        .map_while(|line| line.strip_prefix('#'))
        .map(str::trim)
        .collect()
}

/// The lines of `LINES` at cell (`cs_ns`, `outside_ns`) of `csv`, and the
/// rounds behind each point (least and most).
fn read_cell(
    csv: &str,
    cs_ns: u32,
    outside_ns: u32,
) -> Result<(Vec<Series<'_>>, (u64, u64)), String> {
    let comments = provenance(csv).len();
    let mut lines = csv.lines().skip(comments);
    let header: Vec<&str> = lines.next().ok_or("empty CSV")?.split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|&h| h == name)
            .ok_or(format!("no column {name:?} in the CSV header"))
    };
    let [threads, cs, outside, lock, rounds, throughput] = [
        "threads",
        "cs_ns",
        "outside_ns",
        "lock",
        "rounds",
        "throughput_ops_per_s",
    ]
    .map(column);
    let (threads, cs, outside, lock, rounds, throughput) =
        (threads?, cs?, outside?, lock?, rounds?, throughput?);

    let mut series: Vec<Series<'_>> = LINES
        .iter()
        .map(|style| Series {
            style,
            points: Vec::new(),
        })
        .collect();
    let mut cells = Vec::new();
    let (mut least, mut most) = (u64::MAX, 0);
    for (index, line) in lines.enumerate() {
        let line_no = comments + index + 2;
        let fields: Vec<&str> = line.split(',').collect();
        let field = |i: usize| {
            fields
                .get(i)
                .copied()
                .ok_or(format!("line {line_no}: too few fields"))
        };
        let number = |i: usize| -> Result<f64, String> {
            let text = field(i)?;
            text.parse()
                .map_err(|_| format!("line {line_no}: {text:?} is not a number"))
        };
        let cell = (number(cs)? as u32, number(outside)? as u32);
        if !cells.contains(&cell) {
            cells.push(cell);
        }
        if cell != (cs_ns, outside_ns) {
            continue;
        }
        let name = field(lock)?;
        let Some(line) = series.iter_mut().find(|s| s.style.lock == name) else {
            continue;
        };
        line.points.push(Point {
            threads: number(threads)?,
            mops: number(throughput)? / 1e6,
        });
        let n = number(rounds)? as u64;
        (least, most) = (least.min(n), most.max(n));
    }
    if series.iter().all(|s| s.points.is_empty()) {
        let cells: Vec<String> = cells
            .iter()
            .map(|(cs, outside)| format!("--cs {cs} --outside {outside}"))
            .collect();
        return Err(format!(
            "no figures for cs_ns={cs_ns}, outside_ns={outside_ns}; the CSV has: {}",
            cells.join("; ")
        ));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.threads.total_cmp(&b.threads));
    }
    series.retain(|s| !s.points.is_empty());
    Ok((series, (least, most)))
}

/// `ns` as people write it: 20 ns, 2 µs, none.
fn work(ns: u32) -> String {
    match ns {
        0 => "none".to_string(),
        ns if ns >= 1_000 && ns % 1_000 == 0 => format!("{} µs", ns / 1_000),
        ns => format!("{ns} ns"),
    }
}

/// A step of 1, 2 or 5 times a power of ten that cuts `0..max` into about
/// five intervals.
fn tick_step(max: f64) -> f64 {
    let raw = max / 5.0;
    let magnitude = 10_f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * magnitude >= raw)
        .unwrap_or(10.0);
    step * magnitude
}

/// `v` with as many decimals as `step` needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The marker of a line at (`x`, `y`).
fn marker(marker: Marker, x: f64, y: f64, colour: &str) -> String {
    let r = 4.5;
    let shape = match marker {
        Marker::Circle => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}""#),
        Marker::Square => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}""#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        Marker::Diamond => format!(
            r#"<polygon points="{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}""#,
            y - 1.3 * r,
            x + 1.3 * r,
            y + 1.3 * r,
            x - 1.3 * r
        ),
        Marker::Triangle => format!(
            r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}""#,
            y - 1.3 * r,
            x + 1.2 * r,
            y + 0.8 * r,
            x - 1.2 * r,
            y + 0.8 * r
        ),
    };
    format!(r#"{shape} fill="{colour}" stroke="white" stroke-width="1"/>"#)
}

/// The chart: a log2 thread axis with a tick at every thread count of the
/// data, a linear throughput axis from 0, one line per series, a legend to
/// the right. `subtitle` is one short line per element.
fn chart(title: &str, subtitle: &[String], series: &[Series<'_>]) -> String {
    const WIDTH: f64 = 840.0;
    const HEIGHT: f64 = 518.0;
    const LEFT: f64 = 80.0;
    const RIGHT: f64 = 250.0;
    const TOP: f64 = 114.0;
    const BOTTOM: f64 = 62.0;
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);

    let points = series.iter().flat_map(|s| &s.points);
    let mut threads: Vec<f64> = points.clone().map(|p| p.threads).collect();
    threads.sort_by(f64::total_cmp);
    threads.dedup();
    let (lo, hi) = (threads[0].log2(), threads[threads.len() - 1].log2());
    // A margin of a fraction of the span (or one octave for a single thread
    // count) keeps the end markers off the frame.
    let pad = if hi > lo { (hi - lo) * 0.06 } else { 1.0 };
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |t: f64| LEFT + (t.log2() - lo) / (hi - lo) * plot_w;
    let max = points.map(|p| p.mops).fold(0.0, f64::max);
    let step = tick_step(if max > 0.0 { max } else { 1.0 });
    let top = (max / step).ceil().max(1.0) * step;
    let y = |v: f64| TOP + plot_h - v / top * plot_h;

    let mut svg = String::new();
    let mut w = |line: String| {
        svg.push_str(&line);
        svg.push('\n');
    };
    w(format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">"#
    ));
    w(format!(
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    ));
    w(format!(
        r#"<text x="{}" y="30" font-size="17" font-weight="bold" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    ));
    for (i, line) in subtitle.iter().enumerate() {
        w(format!(
            r##"<text x="{}" y="{}" fill="#555" text-anchor="middle">{}</text>"##,
            WIDTH / 2.0,
            52 + 18 * i,
            escape(line)
        ));
    }

    // Grid lines and tick labels.
    let mut v = 0.0;
    while v <= top + step / 2.0 {
        let py = y(v);
        w(format!(
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/>"##,
            LEFT + plot_w
        ));
        w(format!(
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            py + 4.5,
            tick_label(v, step)
        ));
        v += step;
    }
    for &t in &threads {
        let px = x(t);
        w(format!(
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/>"##,
            TOP + plot_h
        ));
        w(format!(
            r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="black"/>"#,
            TOP + plot_h,
            TOP + plot_h + 5.0
        ));
        w(format!(
            r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
            TOP + plot_h + 20.0
        ));
    }
    // Axes and their names.
    w(format!(
        r#"<path d="M {LEFT} {TOP} V {:.1} H {:.1}" fill="none" stroke="black"/>"#,
        TOP + plot_h,
        LEFT + plot_w
    ));
    w(format!(
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">threads (log scale)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 18.0
    ));
    w(format!(
        r#"<text transform="translate(22 {:.1}) rotate(-90)" text-anchor="middle">throughput (million operations/s)</text>"#,
        TOP + plot_h / 2.0
    ));

    // The lines, their markers, and the legend.
    for (i, s) in series.iter().enumerate() {
        let style = s.style;
        let path: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.threads), y(p.mops)))
            .collect();
        let dash = if style.dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{}""#, style.dash)
        };
        w(format!(
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5"{dash}/>"#,
            path.join(" "),
            style.colour
        ));
        let ly = TOP + 14.0 + i as f64 * 24.0;
        let lx = LEFT + plot_w + 20.0;
        w(format!(
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2.5"{dash}/>"#,
            lx + 34.0,
            style.colour
        ));
        w(format!(
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 44.0,
            ly + 4.5,
            escape(style.label)
        ));
    }
    for (i, s) in series.iter().enumerate() {
        for p in &s.points {
            w(marker(
                s.style.marker,
                x(p.threads),
                y(p.mops),
                s.style.colour,
            ));
        }
        let ly = TOP + 14.0 + i as f64 * 24.0;
        w(marker(
            s.style.marker,
            LEFT + plot_w + 37.0,
            ly,
            s.style.colour,
        ));
    }
    w("</svg>".to_string());
    svg
}

fn run(args: &Args) -> Result<(), String> {
    let csv = std::fs::read_to_string(&args.csv).map_err(|e| {
        format!(
            "cannot read {} ({e}); `cargo run --release --example compare` writes it",
            args.csv.display()
        )
    })?;
    let (series, (least, most)) = read_cell(&csv, args.cs_ns, args.outside_ns)?;
    let title = format!(
        "Contention: critical section {}, outside work {}",
        work(args.cs_ns),
        work(args.outside_ns)
    );
    let rounds = if least == most {
        format!("{least}")
    } else {
        format!("{least}-{most}")
    };
    let source = args.csv.file_name().map_or_else(
        || args.csv.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut subtitle = vec![
        "one object, T threads each looping { lock; critical section; unlock; outside work }"
            .to_string(),
        format!("median of {rounds} rounds per point, from {source}"),
    ];
    subtitle.extend(provenance(&csv).into_iter().map(String::from));
    let svg = chart(&title, &subtitle, &series);
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&args.out, svg)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("{title}: {}", args.out.display());
    Ok(())
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("plot: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plot: {e}");
            ExitCode::FAILURE
        }
    }
}
