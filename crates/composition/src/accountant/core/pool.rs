//! Helper threads kept for the life of the process, for the accountant's two-way and
//! n-way splits (the two sides of a bracket, a law's cells between the cores, the
//! reverse direction's first step beside the forward one).
//!
//! A thread spawned for each split did not run beside its parent for up to a scheduler
//! tick: on this project's 2-core machines a new thread waits on its parent's core until
//! the parent blocks or the load is balanced, 1–3 ms later (measured: a spawned thread
//! started 0.2–3.1 ms after its spawn while the parent computed). DP-SGD at q = 1e-4,
//! σ = 2, T = 1e3 takes about 10 ms in all, and each of its bracket's steps ran its two
//! sides one after the other. A helper that has run once and waits on a condition
//! variable is woken on the idle core within tens of microseconds.
//!
//! A split offers its parts to the helpers through one queue and runs its first part
//! itself; then it takes back every part no helper has started and runs it too, and
//! waits only for parts already running. So a split never waits on work that has not
//! started (nesting cannot deadlock), and a part offered while the helpers are busy is
//! picked up by whichever thread is free first. Where a part runs never changes what it
//! computes: every offered part runs with no work meter set, as on the freshly spawned
//! thread such parts once had ([`crate::accountant::core::work::detached`]).

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// An offered part, its borrowed lifetime erased (see [`Slot::offer`]).
trait Runnable: Send + Sync {
    /// Runs the part if no thread has taken it yet.
    fn run_if_pending(&self);
}

/// The queue of offered parts, and the helpers' wake-up.
struct Pool {
    queue: Mutex<VecDeque<Arc<dyn Runnable>>>,
    offered: Condvar,
}

/// Locks `m`, through a poisoned lock too (parts catch their panics; a poisoned lock
/// holds consistent data).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pool: one helper per core beyond the first, started on first use. Each helper
/// reports once it runs, and the first user waits for that: the helper has then run
/// (on the caller's core, which the wait frees), and a later wake-up finds it an idle
/// core instead of queueing it behind its parent.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    static STARTED: OnceLock<()> = OnceLock::new();
    let p = POOL.get_or_init(|| Pool {
        queue: Mutex::new(VecDeque::new()),
        offered: Condvar::new(),
    });
    STARTED.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let ready = Arc::new((Mutex::new(0usize), Condvar::new()));
        let mut started = 0;
        for i in 1..cores {
            let ready = Arc::clone(&ready);
            let spawned = std::thread::Builder::new()
                .name(format!("dpw-helper-{i}"))
                .spawn(move || {
                    *lock(&ready.0) += 1;
                    ready.1.notify_all();
                    drop(ready);
                    helper(p);
                });
            // Without a helper, every part runs on the thread that offered it.
            if spawned.is_ok() {
                started += 1;
            }
        }
        let mut n = lock(&ready.0);
        while *n < started {
            n = ready.1.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    });
    p
}

/// A helper's loop: take the oldest offered part and run it (a part its caller took back
/// meanwhile is skipped), else wait for one.
fn helper(p: &'static Pool) {
    loop {
        let job = {
            let mut q = lock(&p.queue);
            loop {
                if let Some(j) = q.pop_front() {
                    break j;
                }
                q = p.offered.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        job.run_if_pending();
    }
}

/// Where an offered part stands.
enum State<F, R> {
    /// Not started: the closure, for whichever thread takes it.
    Pending(F),
    /// Taken by a thread, running.
    Running,
    /// Finished by a helper: its result, or its panic.
    Done(std::thread::Result<R>),
    /// Its result taken by the caller (nothing borrowed is left in the slot).
    Collected,
}

/// One offered part and its result.
struct Slot<F, R> {
    state: Mutex<State<F, R>>,
    done: Condvar,
}

impl<F: FnOnce() -> R + Send, R: Send> Runnable for Slot<F, R> {
    fn run_if_pending(&self) {
        let f = {
            let mut s = lock(&self.state);
            match std::mem::replace(&mut *s, State::Running) {
                State::Pending(f) => f,
                other => {
                    *s = other;
                    return;
                }
            }
        };
        let r = catch_unwind(AssertUnwindSafe(|| {
            crate::accountant::core::work::detached(f)
        }));
        *lock(&self.state) = State::Done(r);
        self.done.notify_all();
    }
}

impl<F: FnOnce() -> R + Send, R: Send> Slot<F, R> {
    /// Offers `f` to the helpers; [`Self::collect`] must be called before `f`'s borrows
    /// end.
    fn offer(f: F) -> Arc<Self> {
        let slot = Arc::new(Slot {
            state: Mutex::new(State::Pending(f)),
            done: Condvar::new(),
        });
        let erased: Arc<dyn Runnable + '_> = slot.clone();
        // SAFETY: the slot may borrow data that outlives only the caller's frame. The
        // caller calls `collect` before it returns or unwinds (`join`, `map`), which
        // returns only once the part has run to its end or was taken back unstarted, and
        // leaves the slot `Collected`: a helper that pops this entry later finds nothing
        // to run, and dropping the slot then drops nothing borrowed.
        let erased: Arc<dyn Runnable> = unsafe {
            std::mem::transmute::<Arc<dyn Runnable + '_>, Arc<dyn Runnable + 'static>>(erased)
        };
        let p = pool();
        lock(&p.queue).push_back(erased);
        p.offered.notify_one();
        slot
    }

    /// The part's result: run here if no helper took it, else waited for.
    fn collect(&self) -> std::thread::Result<R> {
        let mut s = lock(&self.state);
        loop {
            match std::mem::replace(&mut *s, State::Collected) {
                State::Pending(f) => {
                    *s = State::Running;
                    drop(s);
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        crate::accountant::core::work::detached(f)
                    }));
                    *lock(&self.state) = State::Collected;
                    return r;
                }
                State::Done(r) => return r,
                State::Running => {
                    *s = State::Running;
                    s = self.done.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                State::Collected => unreachable!("a part is collected once"),
            }
        }
    }
}

/// The result of a part: resumes its panic on the caller's thread.
fn unwrap<R>(r: std::thread::Result<R>) -> R {
    match r {
        Ok(v) => v,
        Err(p) => resume_unwind(p),
    }
}

/// Runs `a` on this thread while `b` is offered to the helpers (run here after `a` if
/// none took it); returns both results. `b` runs without a work meter wherever it runs;
/// a panic in either is resumed here once both ended.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    let slot = Slot::offer(b);
    let ra = catch_unwind(AssertUnwindSafe(a));
    let rb = slot.collect();
    (unwrap(ra), unwrap(rb))
}

/// `f` of every item, in the items' order: the items after the first are offered to the
/// helpers, the first runs here, then every item no helper took. Every call of `f` runs
/// without a work meter; a panic is resumed here once every part ended.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let f = &f;
    let mut items = items.into_iter();
    let Some(first) = items.next() else {
        return Vec::new();
    };
    let slots: Vec<_> = items.map(|x| Slot::offer(move || f(x))).collect();
    let r0 = catch_unwind(AssertUnwindSafe(|| {
        crate::accountant::core::work::detached(|| f(first))
    }));
    let rest: Vec<std::thread::Result<R>> = slots.iter().map(|s| s.collect()).collect();
    let mut out = Vec::with_capacity(rest.len() + 1);
    out.push(unwrap(r0));
    out.extend(rest.into_iter().map(unwrap));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Both parts of a join run, borrowing the caller's data, each result where it
    /// belongs; nested joins (their parts offered while the helpers are busy) complete.
    #[test]
    fn joins_return_each_part_and_nest() {
        let data: Vec<u64> = (1..=1000).collect();
        let (a, b) = join(
            || data[..500].iter().sum::<u64>(),
            || data[500..].iter().sum::<u64>(),
        );
        assert_eq!((a, b), (125_250, 375_250));
        let ((a1, a2), (b1, b2)) = join(
            || join(|| data[0], || data[1]),
            || join(|| data[2], || data[3]),
        );
        assert_eq!([a1, a2, b1, b2], [1, 2, 3, 4]);
    }

    /// `map` keeps the items' order and runs every item once, from several callers at
    /// once (so that some parts are taken back by their callers, some run by helpers).
    #[test]
    fn map_keeps_order_and_runs_each_item_once() {
        let calls = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let calls = &calls;
                s.spawn(move || {
                    for round in 0..50u64 {
                        let items: Vec<u64> = (0..7).map(|i| t * 1000 + round * 10 + i).collect();
                        let out = map(items.clone(), |x| {
                            calls.fetch_add(1, Ordering::Relaxed);
                            x * 3
                        });
                        assert_eq!(out, items.iter().map(|x| x * 3).collect::<Vec<_>>());
                    }
                });
            }
        });
        assert_eq!(calls.load(Ordering::Relaxed), 4 * 50 * 7);
        assert!(map(Vec::<u8>::new(), |x| x).is_empty());
    }

    /// An offered part is run by a helper while the caller's own part is still running:
    /// the caller's part waits until the other has started (on one core there is no
    /// helper, and the test has nothing to show). The wait allows a minute, for a helper
    /// busy with another test's part; a pool that never runs offered parts fails.
    #[test]
    fn an_offered_part_runs_beside_the_callers() {
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return;
        }
        let started = std::sync::atomic::AtomicBool::new(false);
        let (seen, _) = join(
            || {
                let t = std::time::Instant::now();
                while !started.load(Ordering::SeqCst) {
                    if t.elapsed() > std::time::Duration::from_secs(60) {
                        return false;
                    }
                    std::thread::yield_now();
                }
                true
            },
            || started.store(true, Ordering::SeqCst),
        );
        assert!(seen, "no helper ran the offered part within a minute");
    }

    /// A panic in an offered part reaches the caller, after the caller's own part
    /// ended, and leaves the pool usable.
    #[test]
    fn a_part_that_panics_is_resumed_by_the_caller_and_the_pool_goes_on() {
        let done_here = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            join(
                || {
                    done_here.fetch_add(1, Ordering::Relaxed);
                },
                || panic!("part b"),
            )
        }));
        assert!(r.is_err());
        assert_eq!(done_here.load(Ordering::Relaxed), 1);
        let r = catch_unwind(AssertUnwindSafe(|| {
            map(
                vec![1, 2, 3],
                |x: i32| if x == 2 { panic!("item 2") } else { x },
            )
        }));
        assert!(r.is_err());
        assert_eq!(join(|| 1, || 2), (1, 2));
        assert_eq!(map(vec![4, 5], |x: i32| x + 1), vec![5, 6]);
    }

    /// An offered part runs without the caller's work meter, on a helper or here: what
    /// it charges is never the caller's (a spawned thread started without one too).
    #[test]
    fn parts_run_without_the_callers_meter() {
        let w = crate::accountant::core::work::Work::new(None);
        w.metered(|| {
            let (_, _) = join(
                || crate::accountant::core::work::charge(3).unwrap(),
                || crate::accountant::core::work::charge(100).unwrap(),
            );
            let _ = map(vec![1u64, 2, 3], |x| {
                crate::accountant::core::work::charge(x * 1000).unwrap()
            });
        });
        assert_eq!(w.done(), 3);
    }
}
