//! Work budgets and cancellation of accountant computations (docs/accountant.md §6.1).
//!
//! The work of a computation is counted in *bins transformed*: every FFT window of `n`
//! bins over `F` factors charges `n·(F + 1)` (one forward transform a factor and the
//! inverse), and every cell of a law's discretisation one (a quadrature each for bounded
//! noise). The count depends only on the question, never on the machine or its load, so
//! a budget of work stops the same computation at the same point everywhere, unlike a
//! deadline in seconds.
//!
//! A budget is checked between the refinement steps of a bracket (a step once begun is
//! finished, so the bracket it gives is certified); a cancellation (Ctrl-C in the Python
//! binding) is checked at every window and ends the computation with
//! [`CompositionError::Interrupted`].

use crate::error::{CompositionError, Result};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// A shared meter of work, with an optional budget and a cancellation flag; clones share
/// it (the two directions of a composition, the evaluations of a search).
#[derive(Debug, Clone)]
pub struct Work {
    inner: Arc<Inner>,
}

impl Default for Work {
    /// A meter without a budget.
    fn default() -> Self {
        Self::new(None)
    }
}

#[derive(Debug, Default)]
struct Inner {
    done: AtomicU64,
    budget: AtomicU64,
    /// Shared with the meters set [`Work::aside`] from this one.
    cancelled: Arc<AtomicBool>,
    hit: AtomicBool,
}

impl Work {
    /// A meter with at most `budget` bins transformed (`None`: unlimited).
    pub fn new(budget: Option<u64>) -> Self {
        let inner = Inner::default();
        inner
            .budget
            .store(budget.unwrap_or(u64::MAX), Ordering::Relaxed);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Bins transformed so far.
    pub fn done(&self) -> u64 {
        self.inner.done.load(Ordering::Relaxed)
    }

    /// The budget (`None`: unlimited).
    pub fn budget(&self) -> Option<u64> {
        match self.inner.budget.load(Ordering::Relaxed) {
            u64::MAX => None,
            b => Some(b),
        }
    }

    /// Whether the work done has reached the budget; the first time it is seen, the meter
    /// remembers that the budget stopped something ([`Self::budget_hit`]).
    pub(crate) fn exhausted(&self) -> bool {
        let over = self.budget().is_some_and(|b| self.done() >= b);
        if over {
            self.inner.hit.store(true, Ordering::Relaxed);
        }
        over
    }

    /// The work left before the budget (`None`: no budget).
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.budget().map(|b| b.saturating_sub(self.done()))
    }

    /// Whether `bins` more would pass the budget; if so, the meter remembers that the
    /// budget stopped something ([`Self::budget_hit`]).
    pub(crate) fn would_pass(&self, bins: u64) -> bool {
        let over = self.remaining().is_some_and(|r| bins > r);
        if over {
            self.inner.hit.store(true, Ordering::Relaxed);
        }
        over
    }

    /// Whether a computation on this meter stopped short because of the budget.
    pub fn budget_hit(&self) -> bool {
        self.inner.hit.load(Ordering::Relaxed)
    }

    /// Asks every computation on this meter to stop at its next window (from any thread).
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Relaxed);
    }

    /// A meter for work done beside a computation on this one (the reverse direction's
    /// first step beside the forward refinement): it shares this meter's cancellation,
    /// has no budget, and its count joins this one only by [`Self::absorb`], where the
    /// program puts it. Charged here directly, that work would reach a budget checked
    /// meanwhile sooner or later as the threads happened to run.
    pub(crate) fn aside(&self) -> Work {
        let inner = Inner {
            budget: AtomicU64::new(u64::MAX),
            cancelled: Arc::clone(&self.inner.cancelled),
            ..Inner::default()
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Holds an eighth of the budget left for work [`Self::aside`] (counted as done until
    /// [`Self::absorb_held`]), so that what runs beside it sees only the rest; the held
    /// amount is the aside work's allowance ([`limited`]). `None`: no budget.
    pub(crate) fn hold_for_aside(&self) -> Option<u64> {
        let held = self.remaining().map(|r| r / 8)?;
        self.inner.done.fetch_add(held, Ordering::Relaxed);
        Some(held)
    }

    /// Releases what [`Self::hold_for_aside`] held and adds the work counted on `other`.
    pub(crate) fn absorb_held(&self, other: &Work, held: Option<u64>) {
        if let Some(h) = held {
            self.inner.done.fetch_sub(h, Ordering::Relaxed);
        }
        self.absorb(other);
    }

    /// Adds the work counted on `other` (a meter set [`Self::aside`]).
    pub(crate) fn absorb(&self, other: &Work) {
        self.inner.done.fetch_add(other.done(), Ordering::Relaxed);
    }

    /// Whether [`Self::cancel`] was called.
    pub fn cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Relaxed)
    }

    /// Runs `f` on this thread with a meter current that shares this one's cancellation
    /// and counts nothing: work before a computation proper (building a law, such as a
    /// balls-in-bins epoch's, which charges as it goes) stops at [`Self::cancel`] with
    /// [`CompositionError::Interrupted`], and the count and budget stay as they were.
    pub fn watching<T>(&self, f: impl FnOnce() -> T) -> T {
        self.aside().metered(f)
    }

    /// Runs `f` on this thread with the meter current, then adds the work it charged.
    /// The sum is taken after `f` returns, so concurrent sides add deterministic totals.
    pub(crate) fn metered<T>(&self, f: impl FnOnce() -> T) -> T {
        let prev = CURRENT.with(|c| c.replace(Some((self.clone(), 0))));
        let out = f();
        let (_, n) = CURRENT
            .with(|c| c.replace(prev))
            .expect("the meter set above");
        self.inner.done.fetch_add(n, Ordering::Relaxed);
        out
    }
}

thread_local! {
    /// The meter of the computation running on this thread, and what it charged so far.
    static CURRENT: Cell<Option<(Work, u64)>> = const { Cell::new(None) };
}

/// Runs `f` with no meter current on this thread (the one before is restored after): a
/// part of a split ([`crate::accountant::core::pool`]) charges nothing to its caller's meter, wherever it
/// runs, as on the freshly spawned thread such parts once had.
pub(crate) fn detached<T>(f: impl FnOnce() -> T) -> T {
    let prev = CURRENT.with(|c| c.replace(None));
    let out = f();
    CURRENT.with(|c| c.set(prev));
    out
}

thread_local! {
    /// The work this thread may still charge in the step it is running ([`limited`];
    /// `None`: no limit).
    static ALLOWANCE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` on this thread with at most `bins` chargeable by the meters current in it
/// (`None`: no limit): a charge past that is refused with
/// [`CompositionError::WorkBudget`] before its work is done. Each thread's allowance is
/// set before it starts, from the work done before, so the refusals are the same at any
/// load (docs/accountant.md §6.1).
pub(crate) fn limited<T>(bins: Option<u64>, f: impl FnOnce() -> T) -> T {
    let prev = ALLOWANCE.with(|a| a.replace(bins));
    let out = f();
    ALLOWANCE.with(|a| a.set(prev));
    out
}

/// Charges `bins` to the current thread's meter (if any); an error if it was cancelled,
/// or if the charge would pass the thread's allowance ([`limited`]).
pub(crate) fn charge(bins: u64) -> Result<()> {
    CURRENT.with(|c| {
        let Some((w, n)) = c.take() else {
            return Ok(());
        };
        let cancelled = w.cancelled();
        let over = ALLOWANCE.with(|a| match a.get() {
            Some(left) if bins > left => true,
            Some(left) => {
                a.set(Some(left - bins));
                false
            }
            None => false,
        });
        if over {
            w.inner.hit.store(true, Ordering::Relaxed);
            c.set(Some((w, n)));
            return Err(CompositionError::WorkBudget);
        }
        c.set(Some((w, n.saturating_add(bins))));
        if cancelled {
            Err(CompositionError::Interrupted)
        } else {
            Ok(())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_after_the_metered_call_and_cancel_stops() {
        let w = Work::new(Some(100));
        assert!(charge(5).is_ok(), "no meter: nothing to charge");
        let r = w.metered(|| {
            charge(60)?;
            charge(50)
        });
        assert!(r.is_ok());
        assert_eq!(w.done(), 110);
        assert!(!w.budget_hit());
        assert!(w.exhausted() && w.budget_hit());
        let shared = w.clone();
        shared.cancel();
        assert_eq!(w.metered(|| charge(1)), Err(CompositionError::Interrupted));
        // Watched work stops at the cancellation and is not counted.
        assert_eq!(w.watching(|| charge(7)), Err(CompositionError::Interrupted));
        assert_eq!(w.done(), 111);
        assert_eq!(Work::new(Some(5)).watching(|| charge(9)), Ok(()));
        assert_eq!(Work::new(None).budget(), None);
        // The default meter has no budget: it is never exhausted.
        let free = Work::default();
        free.metered(|| charge(u64::MAX - 1)).unwrap();
        assert!(!free.exhausted() && free.budget().is_none());
    }
}
