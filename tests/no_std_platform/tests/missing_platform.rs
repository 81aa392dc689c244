//! Without `std` and without a registered platform, the first lock is a
//! clear panic, never undefined behaviour.

#[test]
#[should_panic(expected = "no platform registered")]
fn lock_without_a_platform_panics() {
    let word = metalock::MultiUseWord::new();
    drop(word.lock());
}
