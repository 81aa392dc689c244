//! Why a keyed monitor trails the embedded word under contention: the
//! cache line. Three shapes run one contention loop (T threads, each
//! { lock; bump a counter; `cs` steps; unlock; `out` steps }):
//!
//! - `same`: an embedded word with the counter on its cache line;
//! - `apart`: an embedded word with the counter on the next line;
//! - `keyed`: `metalock::lock(&counter)`, whose home is a word elsewhere.
//!
//! If the keyed monitor's gap to `same` is the second line every hand-off
//! moves, `keyed` runs like `apart`, and both trail `same` in the same
//! cells. Every shape's counter must come out equal to the operations
//! counted, or the example panics. Before and after each thread count it
//! prints how long a cache line takes to go from one thread to another and
//! back: the more that costs, the more the second line does. Run:
//! `cargo run --release --example second_line` (about 75 s).

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use metalock::MultiUseWord;

// Only the cache-line round trip and what it uses are needed here.
#[allow(dead_code)]
#[path = "../benches/common/measure.rs"]
mod measure;

#[repr(C, align(128))]
struct Same {
    word: MultiUseWord,
    counter: Cell<u64>,
}

#[repr(C, align(128))]
struct Apart {
    word: MultiUseWord,
    _line: [u8; 120],
    counter: Cell<u64>,
}

#[repr(C, align(128))]
struct Keyed {
    counter: Cell<u64>,
}

// SAFETY: each counter is only touched while its monitor is held, by the
// word of the same struct or, for `Keyed`, the keyed monitor of the
// counter's address; the monitor's enter and exit order the accesses.
unsafe impl Sync for Same {}
// SAFETY: as for `Same`.
unsafe impl Sync for Apart {}
// SAFETY: as for `Same`.
unsafe impl Sync for Keyed {}

fn steps(n: u32) {
    for i in 0..n {
        black_box(i);
    }
}

/// Operations per microsecond of all threads, over 300 ms.
fn run(threads: usize, shape: usize, cs: u32, out: u32) -> f64 {
    let same = Same {
        word: MultiUseWord::new(),
        counter: Cell::new(0),
    };
    let apart = Apart {
        word: MultiUseWord::new(),
        _line: [0; 120],
        counter: Cell::new(0),
    };
    let keyed = Keyed {
        counter: Cell::new(0),
    };
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (same, apart, keyed, stop, total) = (&same, &apart, &keyed, &stop, &total);
            s.spawn(move || {
                let mut done = 0;
                while !stop.load(Relaxed) {
                    for _ in 0..64 {
                        match shape {
                            0 => {
                                let _guard = same.word.lock();
                                same.counter.set(same.counter.get() + 1);
                                steps(cs);
                            }
                            1 => {
                                let _guard = apart.word.lock();
                                apart.counter.set(apart.counter.get() + 1);
                                steps(cs);
                            }
                            _ => {
                                let _guard = metalock::lock(keyed);
                                keyed.counter.set(keyed.counter.get() + 1);
                                steps(cs);
                            }
                        }
                        steps(out);
                    }
                    done += 64;
                }
                total.fetch_add(done, Relaxed);
            });
        }
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Relaxed);
    });
    let elapsed = started.elapsed();
    // Relaxed: the scope joined every thread.
    let total = total.load(Relaxed);
    let counted = [&same.counter, &apart.counter, &keyed.counter][shape.min(2)].get();
    assert_eq!(
        counted, total,
        "an update was lost: the monitor did not exclude"
    );
    total as f64 / elapsed.as_secs_f64() / 1e6
}

fn main() {
    println!(
        "thr  cs out |  same apart keyed (Mops/s, medians of 7) | apart/same keyed/same keyed/apart"
    );
    let round_trip = || measure::round_trip_label(measure::line_round_trip());
    for threads in [2, 4, 16] {
        println!(
            "cache-line round trip between two threads, before {threads} threads: {}",
            round_trip()
        );
        for (cs, out) in [(0, 0), (0, 70), (70, 0), (70, 70)] {
            let mut runs = [vec![], vec![], vec![]];
            // The shapes take turns at running first.
            for round in 0..7 {
                for turn in 0..3 {
                    let shape = (round + turn) % 3;
                    runs[shape].push(run(threads, shape, cs, out));
                }
            }
            for figures in &mut runs {
                figures.sort_by(f64::total_cmp);
            }
            let [same, apart, keyed] = runs.map(|figures| figures[3]);
            println!(
                "{threads:3} {cs:3} {out:3} | {same:5.1} {apart:5.1} {keyed:5.1} | {:10.2} {:10.2} {:11.2}",
                apart / same,
                keyed / same,
                keyed / apart
            );
        }
    }
    println!(
        "cache-line round trip between two threads, after the last: {}",
        round_trip()
    );
    println!("(cs and out in work steps; 70 steps are about 20 ns on the README's machine)");
}
