//! Text in, laws out: the SPEC language and schedules of segments.

pub mod schedule;
pub mod spec;
