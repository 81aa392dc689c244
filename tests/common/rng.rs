//! A small xorshift generator, deterministic per seed, for the tests that
//! draw random operations.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

/// xorshift64 over a non-zero seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next draw, below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
