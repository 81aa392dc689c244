//! A lock-order inversion, found and printed by the `diagnostics` feature:
//! two threads each hold one account and wait for the other's.
//!
//! ```text
//! cargo run --example deadlock --features diagnostics
//! ```

#[cfg(not(feature = "shuttle"))]
use {
    metalock::{Synchronized, diagnostics},
    std::sync::Barrier,
    std::thread,
    std::time::Duration,
};

/// A model checker's build has no `diagnostics` (see the crate's features).
#[cfg(feature = "shuttle")]
fn main() {
    eprintln!("deadlock: feature `shuttle` builds no `diagnostics`; run it without `shuttle`");
}

#[cfg(not(feature = "shuttle"))]
fn main() {
    let checking: &'static Synchronized<i64> = Box::leak(Box::new(Synchronized::new(100)));
    let savings: &'static Synchronized<i64> = Box::leak(Box::new(Synchronized::new(500)));
    let both_hold_one = Box::leak(Box::new(Barrier::new(2)));
    // Two transfers that lock their accounts in opposite orders.
    for (name, from, to) in [
        ("transfer checking->savings", checking, savings),
        ("transfer savings->checking", savings, checking),
    ] {
        let barrier = &*both_hold_one;
        thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut from = from.lock();
                barrier.wait();
                let mut to = to.lock(); // never returns
                *from -= 10;
                *to += 10;
            })
            .expect("spawning a thread");
    }
    loop {
        let deadlocks = diagnostics::deadlocks();
        if !deadlocks.is_empty() {
            println!("{}", diagnostics::snapshot());
            for deadlock in deadlocks {
                println!("{deadlock}");
            }
            // The two threads stay blocked; the process ends without them.
            std::process::exit(0);
        }
        thread::sleep(Duration::from_millis(10));
    }
}
