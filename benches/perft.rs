//! Perft speed: Russian perft 9 and International perft 8, single-threaded, last ply
//! bulk-counted. Target (issue 2): at least 30 M leaf nodes/s on Russian. Criterion's
//! throughput line reports leaf nodes per second ("elem/s").

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use draughts_arbiter::rules::{Position, Variant, perft};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (variant, depth, leaves) in [
        (Variant::Russian, 9, 4_570_586u64),
        (Variant::International, 8, 6_483_961),
    ] {
        let pos = Position::start(variant);
        group.throughput(Throughput::Elements(leaves));
        group.bench_function(format!("{variant} {depth}"), |b| {
            b.iter(|| {
                let n = perft(&pos, depth, true);
                assert_eq!(n, leaves);
                n
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
