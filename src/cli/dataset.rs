//! `vistawise dataset import|split|merge|stats`: the YOLO dataset tools around annotation
//! (see `vistawise::dataset::ops`, `vistawise::annotate::import` and docs/annotation.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use vistawise::annotate::{find_classes, import_dir};
use vistawise::dataset::ops::{self, GroupBy};
use vistawise::dataset::yolo::read_data_yaml;

#[derive(Subcommand)]
pub enum DatasetCommand {
    /// Rewrite YOLO labels from the X-AnyLabeling / LabelMe JSON beside the images.
    Import {
        /// The dataset (holding data.yaml, images/ with the JSON files, labels/).
        dataset: PathBuf,
        /// Folder of the JSON files (and their images) [default: DATASET/images].
        #[arg(long, value_name = "DIR")]
        json_dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Split a dataset into train/val(/test), whole groups at a time (seeded).
    Split {
        dataset: PathBuf,
        /// The new dataset folder (must be empty or absent).
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Fraction of the images for val (9:1 by default).
        #[arg(long, default_value_t = 0.1)]
        val: f64,
        /// Fraction for a test split (none by default).
        #[arg(long, default_value_t = 0.0)]
        test: f64,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// What stays together: the scene annotate recorded, the source, or nothing.
        #[arg(long, value_enum, default_value_t = GroupArg::Scene)]
        group_by: GroupArg,
        #[arg(long)]
        json: bool,
    },
    /// Merge datasets into one; class lists are reconciled by name.
    Merge {
        /// Datasets (each with a data.yaml).
        #[arg(required = true, num_args = 2..)]
        inputs: Vec<PathBuf>,
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Use this data.yaml's class list and order (an input class not in it is an error)
        /// [default: the union, in order of first appearance].
        #[arg(long, value_name = "DATA_YAML")]
        classes: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Per-class counts and a box-size histogram (PNG).
    Stats {
        dataset: PathBuf,
        /// Only this split (train, val, test; `images` for a flat dataset).
        #[arg(long)]
        split: Option<String>,
        /// Where the chart goes [default: DATASET/stats.png].
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum GroupArg {
    Scene,
    Source,
    None,
}

pub fn run(cmd: &DatasetCommand) -> Result<ExitCode> {
    match cmd {
        DatasetCommand::Import {
            dataset,
            json_dir,
            json,
        } => import(dataset, json_dir.as_deref(), *json)?,
        DatasetCommand::Split {
            dataset,
            output,
            val,
            test,
            seed,
            group_by,
            json,
        } => {
            let group_by = match group_by {
                GroupArg::Scene => GroupBy::Scene,
                GroupArg::Source => GroupBy::Source,
                GroupArg::None => GroupBy::None,
            };
            let s = ops::split(dataset, output, *val, *test, *seed, group_by)
                .with_context(|| format!("split {}", dataset.display()))?;
            if *json {
                println!("{}", serde_json::to_string(&s)?);
            } else {
                println!(
                    "{} groups -> train {}, val {}, test {} images (seed {}) -> {}",
                    s.groups,
                    s.train,
                    s.val,
                    s.test,
                    s.seed,
                    output.join("data.yaml").display()
                );
            }
        }
        DatasetCommand::Merge {
            inputs,
            output,
            classes,
            json,
        } => merge(inputs, output, classes.as_deref(), *json)?,
        DatasetCommand::Stats {
            dataset,
            split,
            png,
            json,
        } => {
            let st = ops::stats(dataset, split.as_deref())
                .with_context(|| format!("stats {}", dataset.display()))?;
            let png = png.clone().unwrap_or_else(|| dataset.join("stats.png"));
            ops::draw_stats_png(&st, &png)?;
            if *json {
                println!("{}", serde_json::to_string(&st)?);
            } else {
                print_stats(&st, &png);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `dataset import`: corrected X-AnyLabeling/LabelMe JSON back into YOLO label files.
fn import(dataset: &Path, json_dir: Option<&Path>, json: bool) -> Result<()> {
    let dir = json_dir.map_or_else(|| dataset.join("images"), Path::to_path_buf);
    let classes = find_classes(dataset)?;
    let s = import_dir(&dir, &classes).with_context(|| format!("import {}", dir.display()))?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!(
            "{} JSON files imported ({} boxes); {} label files changed",
            s.files, s.boxes, s.changed
        );
    }
    Ok(())
}

/// `dataset merge`: datasets into one, class ids remapped (to `classes`' list where given).
fn merge(inputs: &[PathBuf], output: &Path, classes: Option<&Path>, json: bool) -> Result<()> {
    let fixed = match classes {
        Some(p) => Some(read_data_yaml(p)?.names),
        None => None,
    };
    let s = ops::merge(inputs, output, fixed.as_deref()).context("merge")?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!(
            "{} images ({} boxes, {} renamed), {} classes -> {}",
            s.images,
            s.boxes,
            s.renamed,
            s.classes.len(),
            output.display()
        );
        for (input, map) in inputs.iter().zip(&s.remap) {
            println!("  {}: class ids {:?}", input.display(), map);
        }
    }
    Ok(())
}

/// The dataset's statistics as text: images, boxes per split and class, box sizes.
fn print_stats(st: &ops::Stats, png: &Path) {
    println!(
        "{} images ({} without boxes), {} boxes",
        st.images, st.images_without_boxes, st.boxes
    );
    for (split, n) in &st.per_split {
        println!("  split {split}: {n} images");
    }
    println!("  {:<24} {:>7} {:>7}", "class", "boxes", "images");
    for c in &st.per_class {
        println!("  {:<24} {:>7} {:>7}", c.class, c.boxes, c.images);
    }
    println!("  box size (sqrt area, px):");
    for (bin, n) in st.size_bins.iter().zip(&st.size_histogram) {
        println!("    {bin:>8}: {n}");
    }
    println!("chart: {}", png.display());
}
