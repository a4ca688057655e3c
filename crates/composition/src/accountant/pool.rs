//! Helper threads kept for the life of the process, for the accountant's two-way and
//! n-way splits (the two sides of a bracket, a law's cells between the cores).
//!
//! A thread spawned for each split did not run beside its parent for up to a scheduler
//! tick: on this project's 2-core machines a new thread waits on its parent's core until
//! the parent blocks or the load is balanced, 1–3 ms later (measured: a spawned thread
//! started 0.2–3.1 ms after its spawn while the parent computed). DP-SGD at q = 1e-4,
//! σ = 2, T = 1e3 takes about 10 ms in all, and each of its bracket's steps ran its two
//! sides one after the other. A helper that has run once and waits on a channel is woken
//! on the idle core within tens of microseconds.
//!
//! Work goes only to an idle helper and is never queued behind a busy one: a split whose
//! helpers are all busy (a split inside a split, or another caller's) runs on the
//! calling thread, so no thread ever waits on work that has not started and nesting
//! cannot deadlock. Where each part runs never changes what it computes: a part runs
//! with no work meter set, as on a freshly spawned thread ([`super::work::detached`]).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, OnceLock};

/// A part handed to a helper, its borrowed lifetime erased (see [`dispatch`]).
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The idle helpers' job channels.
struct Pool {
    idle: Mutex<Vec<Sender<Job>>>,
}

/// The pool: one helper per core beyond the first, started on first use. Each helper
/// reports once it runs, and the first user waits for that: the helper has then run
/// (on the caller's core, which the wait frees), and a later wake-up finds it an idle
/// core instead of queueing it behind its parent.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (ready_tx, ready_rx) = channel::<()>();
        let mut idle = Vec::new();
        for i in 1..cores {
            let (tx, rx) = channel::<Job>();
            let ready = ready_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("dpw-helper-{i}"))
                .spawn(move || {
                    let _ = ready.send(());
                    drop(ready);
                    for job in rx {
                        job();
                    }
                });
            // A helper that cannot be started leaves its part to the caller.
            if spawned.is_ok() {
                idle.push(tx);
            }
        }
        drop(ready_tx);
        for _ in 0..idle.len() {
            let _ = ready_rx.recv();
        }
        Pool {
            idle: Mutex::new(idle),
        }
    })
}

/// Takes an idle helper's channel, if any.
fn take_idle() -> Option<Sender<Job>> {
    let mut idle = pool().idle.lock().unwrap_or_else(|e| e.into_inner());
    idle.pop()
}

/// Hands `f` to the idle helper `helper`; its result (or its panic) arrives on the
/// returned channel, which the caller must drain before `f`'s borrows end.
fn dispatch<'a, R: Send + 'a>(
    helper: Sender<Job>,
    f: impl FnOnce() -> R + Send + 'a,
) -> Receiver<std::thread::Result<R>> {
    let (tx, rx) = channel::<std::thread::Result<R>>();
    let me = helper.clone();
    let job: Box<dyn FnOnce() + Send + 'a> = Box::new(move || {
        let r = catch_unwind(AssertUnwindSafe(|| super::work::detached(f)));
        // Idle again before the caller hears of the result, so that its next split finds
        // this helper free.
        pool()
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(me);
        let _ = tx.send(r);
    });
    // SAFETY: the job borrows data of lifetime 'a. Every caller receives from `rx`
    // before it returns or unwinds (`join`, `map`), and the job sends its result only
    // after `f` has run and been dropped: nothing borrowed is touched after the receive.
    // The channel is empty once the result is received, so dropping it later drops no R.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
    if let Err(back) = helper.send(job) {
        // The helper has gone (it never does: its jobs catch their panics); run the part
        // here instead, so that the receive below still gets its result.
        (back.0)();
    }
    rx
}

/// The result of a part: resumes its panic on the caller's thread.
fn collect<R>(r: std::thread::Result<R>) -> R {
    match r {
        Ok(v) => v,
        Err(p) => resume_unwind(p),
    }
}

/// Runs `a` on this thread and `b` on an idle helper (when none is idle, `b` runs here
/// after `a`); returns both results. `b` runs without a work meter wherever it runs, as
/// a part on a spawned thread did; a panic in either is resumed here once both ended.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    match take_idle() {
        Some(helper) => {
            let rx = dispatch(helper, b);
            let ra = catch_unwind(AssertUnwindSafe(a));
            let rb = rx.recv().expect("a helper's part always reports");
            (collect(ra), collect(rb))
        }
        None => {
            let ra = a();
            (ra, super::work::detached(b))
        }
    }
}

/// `f` of every item, in the items' order: the items after the first go to idle helpers
/// while there are any, the first and the rest run on this thread. Every call of `f`
/// runs without a work meter; a panic is resumed here once every part ended.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let f = &f;
    let mut here: Vec<(usize, T)> = Vec::new();
    let mut away: Vec<(usize, Receiver<std::thread::Result<R>>)> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let helper = if i == 0 { None } else { take_idle() };
        match helper {
            Some(h) => away.push((i, dispatch(h, move || f(item)))),
            None => here.push((i, item)),
        }
    }
    let n = here.len() + away.len();
    let mine = catch_unwind(AssertUnwindSafe(|| {
        here.into_iter()
            .map(|(i, item)| (i, super::work::detached(|| f(item))))
            .collect::<Vec<_>>()
    }));
    let theirs: Vec<(usize, std::thread::Result<R>)> = away
        .into_iter()
        .map(|(i, rx)| (i, rx.recv().expect("a helper's part always reports")))
        .collect();
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    for (i, v) in collect(mine) {
        out[i] = Some(v);
    }
    for (i, r) in theirs {
        out[i] = Some(collect(r));
    }
    out.into_iter()
        .map(|v| v.expect("every part ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Both parts of a join run, borrowing the caller's data, each result where it
    /// belongs; nested joins (the inner ones find the helpers busy) complete too.
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
    /// once (so that some find every helper busy and run their parts themselves).
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
    }

    /// A panic in a helper's part reaches the caller, after the caller's own part ended,
    /// and leaves the helper usable.
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

    /// A part runs without the caller's work meter, on a helper or here: what it
    /// charges is never the caller's (a spawned thread started without one too).
    #[test]
    fn parts_run_without_the_callers_meter() {
        let w = super::super::work::Work::new(None);
        w.metered(|| {
            let (_, _) = join(
                || super::super::work::charge(3).unwrap(),
                || super::super::work::charge(100).unwrap(),
            );
            let _ = map(vec![1u64, 2, 3], |x| {
                super::super::work::charge(x * 1000).unwrap()
            });
        });
        assert_eq!(w.done(), 3);
    }
}
