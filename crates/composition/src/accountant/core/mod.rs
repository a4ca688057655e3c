//! What every layer of the accountant uses: answers and limits, the work budget, the
//! thread pool, memory pages, FFT plans, log-space arithmetic.

pub mod answer;
#[cfg(test)]
pub(crate) mod exact_exp;
pub(crate) mod fft;
pub mod numeric;
pub(crate) mod pages;
pub(crate) mod pool;
pub mod work;
