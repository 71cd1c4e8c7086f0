//! Retrieval pooling time: the Minecraft graph, and generated graphs of 1k and 10k nodes whose
//! simple-path counts explode (layered, forward edges like a tech tree, plus cross links), so the
//! path limits must keep pooling bounded. Targets: < 1 ms Minecraft, < 50 ms at 10k nodes.
//!
//!     cargo bench --bench pooling

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use vistawise::knowledge::{KnowledgeGraph, PathLimits, Strategy, VisualState, pool};
use vistawise::perception::InventoryIcon;

/// A layered graph: Player -> layer 0 -> ... -> layer L-1 -> Target, each node with `fanout`
/// edges to random nodes of the next two layers (deterministic LCG, no dependency needed).
fn generated(nodes: usize, fanout: usize) -> KnowledgeGraph {
    let layers = 20;
    let per_layer = nodes / layers;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let name = |l: usize, i: usize| format!("N{l}_{i}");
    let mut text = String::from("[[node]]\nname = \"Player\"\n[[node]]\nname = \"Target\"\n");
    for l in 0..layers {
        for i in 0..per_layer {
            text += &format!("[[node]]\nname = \"{}\"\n", name(l, i));
        }
    }
    let mut edges = std::collections::BTreeSet::new();
    for i in 0..per_layer.min(8) {
        edges.insert(("Player".to_string(), name(0, i)));
    }
    for l in 0..layers {
        for i in 0..per_layer {
            for _ in 0..fanout {
                let to_layer = l + 1 + next(2);
                let to = if to_layer >= layers {
                    "Target".to_string()
                } else {
                    name(to_layer, next(per_layer))
                };
                edges.insert((name(l, i), to));
            }
        }
    }
    for (a, b) in edges {
        text +=
            &format!("[[edge]]\nfrom = \"{a}\"\nrelation = \"is used to craft\"\nto = \"{b}\"\n");
    }
    KnowledgeGraph::parse(&text, Path::new("generated.toml")).expect("generated graph is valid")
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let limits = PathLimits {
        max_length: 16,
        max_paths: 10_000,
    };
    let mut group = c.benchmark_group("pooling");

    let kg = KnowledgeGraph::load(&root.join("kg/minecraft.toml")).expect("kg");
    let target = kg.node("Diamond").expect("node");
    let mut visual = VisualState::default();
    for name in ["Log", "Planks", "Cobblestone", "Iron Ingot"] {
        visual
            .attributes
            .entry(kg.node(name).expect("node"))
            .or_default()
            .icons
            .push(InventoryIcon {
                class: name.into(),
                x: 430.0,
                y: 693.0,
                conf: 0.9,
                count: None,
            });
    }
    group.bench_function("minecraft_diamond_psp_emp", |b| {
        b.iter(|| {
            black_box(pool(
                &kg,
                target,
                "Obtain a diamond.",
                &visual,
                limits,
                Strategy::PspThenEmp,
            ))
        })
    });

    for n in [1_000, 10_000] {
        let g = generated(n, 3);
        let t = g.node("Target").expect("target");
        let empty = VisualState::default();
        let (_, report) = pool(
            &g,
            t,
            "Obtain the target.",
            &empty,
            limits,
            Strategy::PspThenEmp,
        );
        eprintln!(
            "generated {n} nodes, {} edges: {} paths kept, cut: {}",
            g.graph.edge_count(),
            report.paths,
            report.was_cut()
        );
        group.bench_function(format!("generated_{n}_psp_emp"), |b| {
            b.iter(|| {
                black_box(pool(
                    &g,
                    t,
                    "Obtain the target.",
                    &empty,
                    limits,
                    Strategy::PspThenEmp,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
