//! Perft speed, single-threaded, distinct moves, last ply bulk-counted: the positions of
//! issue 17 (International start, the FMJD forum's Woldouby, AllKings, AlmostPromotion
//! and Random178, the Russian start), one depth each. Criterion's throughput line
//! reports leaf nodes per second ("elem/s"). The README's "Benchmarks" section has the
//! figures, beside Moby Dam's, and how the `perft` command reproduces them.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::rules::{Variant, perft};

/// (name, variant, FEN, depth, leaves at that depth). The counts are in
/// `tests/data/perft/`; AllKings and Random178 are from the same FMJD forum thread
/// (rhalbersma/dctl, `test/src/algo/traversal/international/fmjd.cpp`).
const POSITIONS: &[(&str, Variant, &str, u32, u64)] = &[
    (
        "international start",
        Variant::International,
        "W:W31-50:B1-20",
        9,
        41_022_423,
    ),
    (
        "woldouby",
        Variant::International,
        "W:B12,13,14,16,18,19,21,23,24,26:W25,27,28,30,32,33,34,35,37,38",
        13,
        9_872_645,
    ),
    (
        "allkings",
        Variant::International,
        "W:WK31,K32,K33,K34,K35,K36,K37,K38,K39,K40,K41,K42,K43,K44,K45,K46,K47,K48,K49,K50:\
         BK1,K2,K3,K4,K5,K6,K7,K8,K9,K10,K11,K12,K13,K14,K15,K16,K17,K18,K19,K20",
        8,
        1_333_217,
    ),
    (
        "almostpromotion",
        Variant::International,
        "W:W6,7,8,9,10:B41,42,43,44,45",
        7,
        11_448_262,
    ),
    (
        "random178",
        Variant::International,
        "B:BK17,K24:W6,9,10,11,20,21,22,23,30,K31,33,37,41,42,43,44,46",
        7,
        9_041_010,
    ),
    (
        "russian start",
        Variant::Russian,
        "W:W21-32:B1-12",
        10,
        22_444_032,
    ),
];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for &(name, variant, fen, depth, leaves) in POSITIONS {
        let pos = parse_fen(fen, variant).expect("benchmark FEN");
        group.throughput(Throughput::Elements(leaves));
        group.bench_function(format!("{name} {depth}"), |b| {
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
