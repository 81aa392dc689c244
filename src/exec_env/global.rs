//! The crate's global bookkeeping of execution environments and lock
//! records: where they are allocated, the pool of EEs whose threads exited,
//! the pool of records donated by threads that exited holding a monitor, and
//! the allocation counters.
//!
//! In a normal build EEs and records are allocated once and never freed
//! (type-stable memory: a stale pointer to one is always safe to read), and
//! the pools are guarded by a `SysMutex`, which blocks through the
//! platform. Under the model checkers every EE and record belongs to one
//! model execution: they are registered here and freed when the next
//! execution starts, so memory stays flat however many executions a model
//! explores, and the pools, which hand them from a thread that ended
//! (`end_thread`) to the next, are the execution's too.

use core::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use super::ExecEnv;
use crate::lock_record::LockRecord;

/// Lock records taken from the global allocator (paper 000, Table 2).
/// Written by load and store (the swap-only backend has no fetch-add)
/// under the pools' lock, or under the model checkers the registry's;
/// read without either.
static RECORDS_ALLOCATED: AtomicUsize = AtomicUsize::new(0);
/// EEs taken from the global allocator; written as `RECORDS_ALLOCATED`.
static ENVS_ALLOCATED: AtomicUsize = AtomicUsize::new(0);

pub(super) fn records_allocated() -> usize {
    // Relaxed: a statistic with no data attached.
    RECORDS_ALLOCATED.load(Ordering::Relaxed)
}

/// How many execution environments have been taken from the global
/// allocator so far: about the number of threads alive at the same time,
/// plus those that exited holding a monitor, plus one for each bind that a
/// global allocator which locks monitors nests in another. Not part of the
/// API.
#[cfg(feature = "__test-hooks")]
pub fn exec_envs_allocated() -> usize {
    // Relaxed: a statistic with no data attached.
    ENVS_ALLOCATED.load(Ordering::Relaxed)
}

/// Adds `n` to a counter written only under the global lock.
fn add(counter: &AtomicUsize, n: usize) {
    // Relaxed: the global lock orders the writers; readers want a statistic.
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

/// A batch of `n` fresh records owned by `owner`, unlinked.
fn new_records(owner: usize, n: usize) -> *mut LockRecord {
    alloc::boxed::Box::into_raw(
        (0..n)
            .map(|_| LockRecord::new(owner))
            .collect::<alloc::boxed::Box<[_]>>(),
    ) as *mut LockRecord
}

#[cfg(not(metalock_model))]
pub(super) use pools::allocate_records;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
pub(crate) use pools::for_each_batched_record;
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub(super) use pools::thread_exits_modelled;
pub(super) use pools::{acquire_env, donate_records, push_env, take_donated_records};
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use pools::{donated_records_taken, model_thread_exits, stale_wakeups_taken};
#[cfg(metalock_model)]
pub(super) use registry::allocate_records;

/// Creates this execution's pools and registry of EEs and records
/// (`model::start_execution`).
#[cfg(loom)]
pub(crate) fn create_model_statics() {
    pools::create_pools();
    registry::create_registry();
}

mod pools {
    #[cfg(metalock_model)]
    use super::registry::allocate_env;
    use super::*;
    use crate::primitive::SysMutex;
    use core::ptr;

    /// The pools, under the global lock.
    ///
    /// Invariant: `envs` is a stack of EEs bound to no thread, linked through
    /// `pool_next`; `records` is a stack of records in no word, no queue and
    /// no thread's free list, linked through `free_next`.
    struct Pools {
        envs: *const ExecEnv,
        records: *mut LockRecord,
        /// The last batch of records allocated, linked to the ones before,
        /// for the thread dump of `diagnostics`.
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        batches: *const Batch,
    }

    impl Pools {
        const EMPTY: Self = Self {
            envs: ptr::null(),
            records: ptr::null_mut(),
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            batches: ptr::null(),
        };
    }

    /// A batch of records, in the list of every batch: allocated before
    /// the global lock and never freed, so that neither keeping the list
    /// nor walking it allocates under the lock (a global allocator may lock
    /// monitors, and a lock may need a batch of records).
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    struct Batch {
        first: *const LockRecord,
        len: usize,
        /// The batch allocated before; set before the batch is pushed, and
        /// never changed.
        next: *const Batch,
    }

    // SAFETY: the pointers lead to EEs and records that belong to no thread
    // (invariant), which the lock hands to one thread at a time, and to
    // batches that never change once pushed.
    unsafe impl Send for Pools {}

    #[cfg(not(metalock_model))]
    static POOLS: SysMutex<Pools> = SysMutex::new(Pools::EMPTY);

    #[cfg(metalock_model)]
    crate::primitive::lazy_static! {
        /// One model execution's pools, dropped with it.
        static ref POOLS: SysMutex<Pools> = SysMutex::new(Pools::EMPTY);
    }

    /// Creates this execution's pools (`model::start_execution`).
    #[cfg(loom)]
    pub(crate) fn create_pools() {
        let _ = core::ops::Deref::deref(&POOLS);
    }

    /// Whether the model checkers see threads end (`model_thread_exits`):
    /// set for the whole process before its first model, so that every
    /// execution of every model takes the pools' lock alike.
    #[cfg(metalock_model)]
    static THREAD_EXITS_MODELLED: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Whether a thread skipped the pools, before `model_thread_exits`.
    #[cfg(metalock_model)]
    static POOLS_SKIPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Makes every thread of the models in this process look in the pools
    /// when it binds an EE or refills its free list. Call it before every
    /// model of a test binary whose models end threads (`end_thread`):
    /// without it the pools stay empty and the models skip them, which
    /// spares the binaries whose models end no thread the branches of a
    /// lock around empty pools. Not part of the API.
    ///
    /// # Panics
    ///
    /// If a model of the process already skipped the pools: its executions
    /// and the later ones would differ.
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    pub fn model_thread_exits() {
        // SeqCst (here and below): plain `std` atomics, outside the models.
        assert!(
            !POOLS_SKIPPED.load(std::sync::atomic::Ordering::SeqCst),
            "metalock: model_thread_exits() must run before every model of the test binary"
        );
        THREAD_EXITS_MODELLED.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether `model_thread_exits` was called.
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    pub(crate) fn thread_exits_modelled() -> bool {
        // SeqCst: as in `model_thread_exits`.
        THREAD_EXITS_MODELLED.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runs `f` on the pools to take something out of them; under the model
    /// checkers, only once they model thread exits.
    fn take<R>(f: impl FnOnce(&mut Pools) -> Option<R>) -> Option<R> {
        // SeqCst: as in `model_thread_exits`.
        #[cfg(metalock_model)]
        if !THREAD_EXITS_MODELLED.load(std::sync::atomic::Ordering::SeqCst) {
            POOLS_SKIPPED.store(true, std::sync::atomic::Ordering::SeqCst);
            return None;
        }
        POOLS.with(f)
    }

    /// Takes an EE for a thread that has none: from the pool if one is there.
    pub(crate) fn acquire_env() -> &'static ExecEnv {
        let pooled = take(|pools| {
            // SAFETY: the pool holds EEs that outlive every thread that may
            // use them (invariant).
            let ee = unsafe { pools.envs.as_ref() }?;
            // SAFETY: an EE in the pool belongs to no thread, so its
            // `pool_next` is ours under the lock.
            pools.envs = ee.pool_next.with(|next| unsafe { *next });
            Some(ee)
        });
        #[cfg(all(metalock_model, feature = "__test-hooks"))]
        if pooled.is_some_and(|ee| ee.parker.unpark_pending_unseen()) {
            STALE_WAKEUPS.with(|n| n.set(n.get() + 1));
        }
        pooled.unwrap_or_else(allocate_env)
    }

    /// Returns the EE of a thread that no longer uses it to the pool.
    ///
    /// # Safety
    /// `ee` is bound to no thread and has no lock record out.
    pub(crate) unsafe fn push_env(ee: &'static ExecEnv) {
        POOLS.with(|pools| {
            // SAFETY: `ee` belongs to no thread (caller's contract).
            ee.pool_next.with_mut(|next| unsafe { *next = pools.envs });
            pools.envs = ee;
        })
    }

    /// A fresh EE that lives forever.
    #[cfg(not(metalock_model))]
    fn allocate_env() -> &'static ExecEnv {
        let ee: &'static ExecEnv =
            alloc::boxed::Box::leak(alloc::boxed::Box::new(CachePadded::new(ExecEnv::new())));
        // SAFETY: not published yet.
        unsafe { ee.settle() };
        count!(ee, lock_records_allocated);
        POOLS.with(|_| {
            add(&ENVS_ALLOCATED, 1);
            // Its hot record.
            add(&RECORDS_ALLOCATED, 1);
            #[cfg(any(feature = "stats", feature = "diagnostics"))]
            all::push(ee);
        });
        ee
    }

    /// A batch of `n` fresh records owned by `owner`, linked by the caller.
    #[cfg(not(metalock_model))]
    pub(crate) fn allocate_records(owner: usize, n: usize) -> *mut LockRecord {
        let first = new_records(owner, n);
        #[cfg(feature = "diagnostics")]
        let batch = alloc::boxed::Box::into_raw(alloc::boxed::Box::new(Batch {
            first,
            len: n,
            next: ptr::null(),
        }));
        POOLS.with(|_pools| {
            add(&RECORDS_ALLOCATED, n);
            #[cfg(feature = "diagnostics")]
            {
                // SAFETY: not published yet, so ours.
                unsafe { (*batch).next = _pools.batches };
                _pools.batches = batch;
            }
        });
        first
    }

    /// Runs `f` on every record allocated in batches (not the EEs' hot
    /// records), for `diagnostics`.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) fn for_each_batched_record(mut f: impl FnMut(&'static LockRecord)) {
        // The lock publishes the last batch, and through it those before.
        let mut next = POOLS.with(|pools| pools.batches);
        // SAFETY: batches are never freed nor changed once pushed.
        while let Some(batch) = unsafe { next.as_ref() } {
            for i in 0..batch.len {
                // SAFETY: a batch of `len` records that are never freed.
                f(unsafe { &*batch.first.add(i) });
            }
            next = batch.next;
        }
    }

    /// Gives the records of the free list starting at `head` to the pool.
    ///
    /// # Safety
    /// The records are a free list the caller owned and no longer uses.
    pub(crate) unsafe fn donate_records(head: *mut LockRecord) {
        if head.is_null() {
            return;
        }
        let mut last = head;
        // SAFETY: the list is the caller's (contract); records outlive
        // every thread that may use them.
        unsafe {
            while !(*last).free_next().is_null() {
                last = (*last).free_next();
            }
        }
        POOLS.with(|pools| {
            // SAFETY: the records belong to no thread now, and the pool's
            // links are ours under the lock.
            unsafe { (*last).set_free_next(pools.records) };
            pools.records = head;
        });
    }

    /// Takes up to `n` donated records for `owner`, linked as a free list
    /// that ends in null, as its first and last record; `None` if there are
    /// none.
    pub(crate) fn take_donated_records(
        owner: usize,
        n: usize,
    ) -> Option<(*mut LockRecord, *mut LockRecord)> {
        let taken = take(|pools| {
            let head = pools.records;
            if head.is_null() {
                return None;
            }
            let mut last = head;
            // SAFETY: records in the pool belong to no thread (invariant);
            // the calling thread, `owner`'s, takes them under the lock,
            // which publishes the new owner to its later uses.
            unsafe {
                (*last).set_owner(owner);
                for _ in 1..n {
                    let next = (*last).free_next();
                    if next.is_null() {
                        break;
                    }
                    last = next;
                    (*last).set_owner(owner);
                }
                pools.records = (*last).free_next();
                (*last).set_free_next(ptr::null_mut());
            }
            Some((head, last))
        });
        #[cfg(all(metalock_model, feature = "__test-hooks"))]
        if taken.is_some() {
            DONATED_TAKEN.with(|n| n.set(n.get() + 1));
        }
        taken
    }

    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    crate::primitive::thread_local! {
        /// The model thread's refills from donated records.
        static DONATED_TAKEN: core::cell::Cell<usize> = core::cell::Cell::new(0);
        /// The model thread's EEs taken from the pool with an unpark
        /// still pending for the thread before it.
        static STALE_WAKEUPS: core::cell::Cell<usize> = core::cell::Cell::new(0);
    }

    /// How many times the calling model thread took an EE from the pool
    /// while an unpark meant for the EE's previous thread was still
    /// pending (a wake-up that reaches the wrong thread, which must treat it
    /// as spurious). Not part of the API.
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    pub fn stale_wakeups_taken() -> usize {
        STALE_WAKEUPS.with(core::cell::Cell::get)
    }

    /// How many times the calling model thread refilled its free list with
    /// donated records. Not part of the API.
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    pub fn donated_records_taken() -> usize {
        DONATED_TAKEN.with(core::cell::Cell::get)
    }

    /// The list of every EE ever allocated, for `stats::snapshot` and
    /// `diagnostics::snapshot`.
    #[cfg(all(any(feature = "stats", feature = "diagnostics"), not(metalock_model)))]
    mod all {
        use super::ExecEnv;
        use core::sync::atomic::{AtomicPtr, Ordering};

        /// The head of the list, linked through `ExecEnv::all_next`. Pushed
        /// under the global lock, read without it: a link is set before its
        /// EE is published and never changes.
        static ALL_ENVS: AtomicPtr<ExecEnv> = AtomicPtr::new(core::ptr::null_mut());

        /// Links a new, never-freed EE into the list; called under the
        /// global lock.
        pub(super) fn push(ee: &'static ExecEnv) {
            // Relaxed: writers are serialized by the lock.
            ee.all_next
                .store(ALL_ENVS.load(Ordering::Relaxed), Ordering::Relaxed);
            // Release pairs with the Acquire in `all_envs`, which then sees
            // the EE's initialised fields and its `all_next`.
            ALL_ENVS.store(ee as *const ExecEnv as *mut ExecEnv, Ordering::Release);
        }

        /// Every EE allocated so far.
        pub(crate) fn all_envs() -> impl Iterator<Item = &'static ExecEnv> {
            // Acquire pairs with the Release in `push`.
            let mut next = ALL_ENVS.load(Ordering::Acquire);
            core::iter::from_fn(move || {
                // SAFETY: the list holds EEs that are never freed, each
                // published by `push` before it became reachable.
                let ee = unsafe { next.as_ref() }?;
                // Relaxed: a link is set before its EE is published (the
                // Acquire on the head) and never changes.
                next = ee.all_next.load(Ordering::Relaxed);
                Some(ee)
            })
        }
    }

    #[cfg(all(any(feature = "stats", feature = "diagnostics"), not(metalock_model)))]
    pub(crate) use all::all_envs;
}

#[cfg(all(not(metalock_model), any(feature = "stats", feature = "diagnostics")))]
pub(crate) use pools::all_envs;

/// Under loom, the EEs and records of one model execution, freed once the
/// next execution starts (by then every thread of the previous one has
/// finished, even one a model did not join).
#[cfg(metalock_model)]
mod registry {
    use super::*;
    use std::sync::Mutex;
    use std::vec::Vec;

    enum Allocation {
        Env(*mut CachePadded<ExecEnv>),
        Records(*mut [LockRecord]),
    }

    // SAFETY: an allocation is only freed, by whichever thread, once nothing
    // of its execution can use it.
    unsafe impl Send for Allocation {}

    impl Drop for Allocation {
        fn drop(&mut self) {
            // SAFETY: each pointer came from `Box::into_raw` and is freed
            // once, when its execution is over.
            unsafe {
                match *self {
                    Allocation::Env(ee) => drop(alloc::boxed::Box::from_raw(ee)),
                    Allocation::Records(records) => drop(alloc::boxed::Box::from_raw(records)),
                }
            }
        }
    }

    /// Allocations of executions that have ended.
    static ENDED: Mutex<Vec<Allocation>> = Mutex::new(Vec::new());

    /// One execution's allocations: created by `model::start_execution`,
    /// or else by the execution's first allocation, either of which frees
    /// those of the executions before it; handed to `ENDED` when the model
    /// checker drops the execution's statics.
    struct Registry {
        allocations: Mutex<Vec<Allocation>>,
    }

    impl Registry {
        fn new() -> Self {
            drop(core::mem::take(&mut *ENDED.lock().unwrap()));
            Self {
                allocations: Mutex::new(Vec::new()),
            }
        }

        fn register(&self, allocation: Allocation, counter: &AtomicUsize, n: usize) {
            let mut allocations = self.allocations.lock().unwrap();
            allocations.push(allocation);
            add(counter, n);
        }
    }

    impl Drop for Registry {
        fn drop(&mut self) {
            let allocations = core::mem::take(&mut *self.allocations.lock().unwrap());
            ENDED.lock().unwrap().extend(allocations);
        }
    }

    crate::primitive::lazy_static! {
        static ref REGISTRY: Registry = Registry::new();
    }

    /// Creates this execution's registry (`model::start_execution`).
    #[cfg(loom)]
    pub(crate) fn create_registry() {
        let _ = core::ops::Deref::deref(&REGISTRY);
    }

    /// A fresh EE that lives until the next execution starts.
    pub(crate) fn allocate_env() -> &'static ExecEnv {
        let ee =
            alloc::boxed::Box::into_raw(alloc::boxed::Box::new(CachePadded::new(ExecEnv::new())));
        REGISTRY.register(Allocation::Env(ee), &ENVS_ALLOCATED, 1);
        // SAFETY: freed only once this execution has ended; not published
        // yet.
        unsafe {
            (*ee).settle();
            &*ee
        }
    }

    /// A batch of `n` fresh records owned by `owner`, linked by the caller.
    pub(crate) fn allocate_records(owner: usize, n: usize) -> *mut LockRecord {
        let first = new_records(owner, n);
        let batch = core::ptr::slice_from_raw_parts_mut(first, n);
        REGISTRY.register(Allocation::Records(batch), &RECORDS_ALLOCATED, n);
        first
    }
}
