//! The windows' large work arrays, backed by transparent huge pages where the kernel
//! offers them on request (Linux, `transparent_hugepage` set to `madvise`, the default of
//! many distributions).
//!
//! A DP-SGD window at small sampling rates holds millions of bins and about 80 bytes a
//! bin of work arrays, each touched first by the window itself: profiled (perf, dwarf call
//! graphs; q = 1e-4, σ = 0.6 and 0.8, T = 1e5 and 1e6), a quarter to a third of the CPU
//! time went to page faults on 4 KiB pages: the kernel's zeroing, and the TLB shootdowns of
//! the copy-on-write faults where a zero page mapped by a read was written. Arrays of at
//! least [`HUGE_BYTES`] are therefore advised as huge pages before their first write, and
//! are written (not `calloc`ed), so that the first touch is a write. The advice changes
//! only where the memory comes from, never a value: every number is the same to the bit
//! with or without it.

/// Asks the C allocator of this process (glibc) to keep freed memory for reuse instead
/// of handing it back to the kernel, for a process that composes window after window:
/// arrays up to 32 MiB (glibc's largest threshold) come from the heap rather than a fresh
/// mapping each, the heap is not trimmed below 256 MiB, and it grows 64 MiB at a time.
/// Freed work arrays then serve the next ones without the kernel zeroing new pages
/// (measured at q = 1e-4, DP-SGD: 5–10 % less time, system time about halved, peak memory
/// 0–50 MiB more). The trim threshold was 1 GiB and the growth 256 MiB: each thread's
/// heap then kept up to a gigabyte it no longer used, 0.3–0.5 GB above the live peak of a
/// composition that filled the bin budget on both sides (1.56 GB live, 2.1 GB resident);
/// DP-SGD's times did not move with the smaller values. Meant for the `dpw` command,
/// which calls it once at start; a library embedded in another program (the Python
/// module) leaves that program's allocator alone. Changes where memory comes from, never
/// a value. Elsewhere than glibc on Linux: nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters (thresholds in bytes); it is called
    // before any other thread exists, and a refusal (return 0) leaves the defaults.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Arrays this large or larger are advised as huge pages (a few 2 MiB pages at least).
pub(crate) const HUGE_BYTES: usize = 8 << 20;

/// A vector of `n` copies of `fill`, advised as huge pages before it is written when it
/// is at least [`HUGE_BYTES`] long.
pub(crate) fn filled<T: Clone>(n: usize, fill: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes >= HUGE_BYTES {
        advise_huge(v.as_ptr() as usize, bytes);
    }
    v.resize(n, fill);
    v
}

/// Asks for huge pages on the 2 MiB-aligned interior of `[start, start + bytes)`.
#[cfg(target_os = "linux")]
fn advise_huge(start: usize, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let lo = start.div_ceil(HUGE) * HUGE;
    let hi = (start + bytes) / HUGE * HUGE;
    if hi > lo {
        // SAFETY: `[lo, hi)` lies inside an allocation this process owns (the vector's
        // buffer, just reserved); MADV_HUGEPAGE is advice about how to back those pages
        // and neither reads, writes nor unmaps any memory. A refusal (THP disabled, an
        // old kernel) leaves ordinary pages, so the result is ignored.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

/// Windows of at least this many bins hold their work arrays one at a time in the
/// process ([`large_window`]).
pub(crate) const LARGE_WINDOW_BINS: usize = 1 << 22;

/// Whether a large window holds its work arrays now, and the wait for it to end.
static LARGE: (std::sync::Mutex<bool>, std::sync::Condvar) =
    (std::sync::Mutex::new(false), std::sync::Condvar::new());

/// While held, this thread's window may allocate the work arrays of a large window.
pub(crate) struct LargeWindow(bool);

/// For a window of `n` bins: at [`LARGE_WINDOW_BINS`] or more, waits until no other large
/// window of this process holds its work arrays (about 100 bytes a bin, 0.8 GiB at the
/// default budget of 2²³ bins), so that the two sides of a bracket, which run at once,
/// never both hold one: the process stays under 2 GiB where two such windows and their
/// plans had reached 2.3 GiB. Smaller windows pass at once. Only the order of the work
/// changes, never a value. The holder must not wait on other threads' windows while it
/// holds it (a window's transform is computed on its own thread).
pub(crate) fn large_window(n: usize) -> LargeWindow {
    if n < LARGE_WINDOW_BINS {
        return LargeWindow(false);
    }
    let (lock, freed) = &LARGE;
    let mut busy = lock.lock().unwrap_or_else(|e| e.into_inner());
    while *busy {
        busy = freed.wait(busy).unwrap_or_else(|e| e.into_inner());
    }
    *busy = true;
    LargeWindow(true)
}

impl Drop for LargeWindow {
    fn drop(&mut self) {
        if self.0 {
            let (lock, freed) = &LARGE;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = false;
            freed.notify_one();
        }
    }
}

/// No huge-page advice off Linux.
#[cfg(not(target_os = "linux"))]
fn advise_huge(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// While a large window is held, another large one waits until it is dropped, and a
    /// small one passes at once.
    #[test]
    fn large_windows_are_held_one_at_a_time() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::mpsc;
        use std::time::Duration;
        let held = large_window(1 << 23);
        let got = AtomicBool::new(false);
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            s.spawn(move || {
                let _g = large_window(LARGE_WINDOW_BINS - 1);
                tx.send(()).unwrap();
            });
            // Does not wait for the large one (were it to, this times out).
            rx.recv_timeout(Duration::from_secs(30))
                .expect("a small window passes while a large one is held");
            let waiter = s.spawn(|| {
                let _g = large_window(LARGE_WINDOW_BINS);
                got.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                !got.load(Ordering::SeqCst),
                "two large windows held at once"
            );
            drop(held);
            waiter.join().unwrap();
            assert!(got.load(Ordering::SeqCst));
        });
    }

    /// Advised or not, the vector holds exactly `n` copies of the fill (the advice must
    /// not touch the contents or the length).
    #[test]
    fn filled_vectors_hold_their_fill_at_every_size() {
        for &n in &[
            0usize,
            1,
            1000,
            HUGE_BYTES / 8 - 1,
            HUGE_BYTES / 8,
            3 * HUGE_BYTES / 8 + 5,
        ] {
            let v = filled(n, -1.5f64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x.to_bits() == (-1.5f64).to_bits()));
            let w = filled(n, (0u8, 7u32));
            assert_eq!(w.len(), n);
            assert!(w.iter().all(|&x| x == (0, 7)));
        }
    }
}
