//! Clock hot path: a press plus the `remaining` query the server makes after it.
//! Target: well under 1 µs. Run with `cargo bench --bench clock`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use draughts_arbiter::clock::{Clock, Side, TimeControl};

/// A started clock under a FIDE-style two-period control with increment.
fn fresh() -> Clock {
    let control: TimeControl = "90m/40+30s,30m+30s".parse().expect("valid control");
    let mut clock = Clock::new(control);
    clock.start(Side::White, 0).expect("a new clock starts");
    clock
}

fn press_and_remaining(c: &mut Criterion) {
    let start = fresh();
    c.bench_function("press + remaining", |b| {
        // Games of 100 presses (1 s each), then a new clock: the per-move lists grow
        // as in a real game and the reset (one clone per 100 presses) is included.
        let mut clock = start.clone();
        let mut now = 0;
        let mut n = 0u32;
        b.iter(|| {
            if n == 100 {
                clock = start.clone();
                now = 0;
                n = 0;
            }
            n += 1;
            now += 1_000;
            let side = if n % 2 == 1 { Side::White } else { Side::Black };
            let events = clock.press(side, black_box(now)).expect("in time");
            black_box(events);
            black_box(clock.remaining(side.opposite(), black_box(now)))
        });
    });

    let mut mid = start.clone();
    for n in 1..=50u64 {
        let side = if n % 2 == 1 { Side::White } else { Side::Black };
        mid.press(side, n * 1_000).expect("in time");
    }
    c.bench_function("remaining", |b| {
        b.iter(|| black_box(mid.remaining(black_box(Side::White), black_box(60_000))));
    });
    c.bench_function("flag_time", |b| {
        b.iter(|| black_box(mid.flag_time(black_box(60_000))));
    });
}

criterion_group!(benches, press_and_remaining);
criterion_main!(benches);
