//! Threads that register the platform at the same time, then lock at once:
//! one registration wins, and every thread, winner or not, finds the
//! platform in place when `set_platform` returns. (A losing call used to
//! return while the winner was still storing it, and the loser's first lock
//! then panicked with "no platform registered".) Its own test binary: the
//! registration is process-wide.

use metalock::MultiUseWord;
use metalock::platform::PlatformAlreadySet;
use metalock_no_std_platform::register;
use std::sync::Barrier;
use std::thread;

#[test]
fn every_registration_returns_with_the_platform_in_place() {
    const THREADS: usize = 8;
    let start = Barrier::new(THREADS);
    let word = MultiUseWord::new();
    let won = thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let registered = register();
                    drop(word.lock());
                    registered
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(Result::is_ok)
            .count()
    });
    assert_eq!(won, 1);
    assert_eq!(register(), Err(PlatformAlreadySet));
}
