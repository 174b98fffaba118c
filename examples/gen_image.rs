//! Writes a synthetic image for the image benchmark (bench/image.sh): an
//! OCI layout with one image of LAYERS gzip layers (the agent's base
//! system, then the bulk), FILES files in all and about SIZE uncompressed
//! bytes, tagged `bench`. File contents are
//! pseudo-random words from a small vocabulary, so they compress about as
//! well as binaries do (2 to 3 times). The same arguments give the same
//! bytes.
//!
//! ```sh
//! cargo run --release --example gen_image -- --out DIR [--size-mib 1024] [--files 50000] [--layers 10]
//! ```

use basepress::oci::fixture::{agent_image, Compression, LayerBlob, LayerWriter, LayoutWriter};
use clap::Parser;
use rayon::prelude::*;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    /// The layout folder to write; must not exist.
    #[arg(long)]
    out: PathBuf,
    /// Uncompressed bytes of file content, in MiB.
    #[arg(long, default_value_t = 1024)]
    size_mib: u64,
    /// Files in all layers together.
    #[arg(long, default_value_t = 50_000)]
    files: u64,
    #[arg(long, default_value_t = 10)]
    layers: u64,
}

/// A small fast generator (xorshift64*), seeded per file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn content(seed: u64, len: usize, vocab: &[[u8; 8]]) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        let x = r.next();
        // Mostly words of the vocabulary, some noise.
        if x % 8 == 0 {
            out.extend_from_slice(&x.to_le_bytes());
        } else {
            out.extend_from_slice(&vocab[(x >> 40) as usize % vocab.len()]);
        }
    }
    out.truncate(len);
    out
}

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    if a.out.exists() {
        eprintln!("{} exists: pick a new folder", a.out.display());
        std::process::exit(2);
    }
    let mut w = LayoutWriter::create(&a.out)?;
    let mut r = Rng(7);
    let vocab: Vec<[u8; 8]> = (0..4096).map(|_| r.next().to_le_bytes()).collect();
    let bulk = a.layers.max(2) - 1;
    let per_layer = a.files / bulk;
    let bytes_per_file = (a.size_mib << 20) / a.files.max(1);
    let layers: Vec<LayerBlob> = (0..bulk)
        .into_par_iter()
        .map(|l| -> std::io::Result<LayerBlob> {
            let file = w.blob_file()?;
            let out = BufWriter::with_capacity(1 << 20, file.reopen()?);
            let mut lw = LayerWriter::new(out, Compression::Gzip)?;
            lw.dir(&format!("opt/bench/l{l}"), 0o755, 0, 0)?;
            for d in 0..(per_layer / 100).max(1) {
                lw.dir(&format!("opt/bench/l{l}/d{d:04}"), 0o755, 0, 0)?;
            }
            for f in 0..per_layer {
                let seed = l * 1_000_000 + f;
                // Sizes vary from a quarter to 1.75 times the mean.
                let len =
                    (bytes_per_file / 4 + (seed * 7919) % (bytes_per_file * 3 / 2).max(1)) as usize;
                let path = format!("opt/bench/l{l}/d{:04}/f{f:06}", f / 100);
                let mode = if f % 10 == 0 { 0o755 } else { 0o644 };
                lw.file(&path, mode, 0, 0, &content(seed, len, &vocab))?;
            }
            let (blob, mut out) = lw.finish()?;
            out.flush()?;
            drop(out);
            w.commit(file, &blob.digest)?;
            Ok(blob)
        })
        .collect::<Result<_, _>>()?;
    let mut spec = agent_image("1.29.0", true, "amd64");
    // The agent's own small layers first, then the bulk.
    let mut all = Vec::new();
    for l in &spec.layers {
        let (blob, bytes) = l.build()?;
        std::fs::write(w.blob_path(&blob.digest), bytes)?;
        all.push(blob);
    }
    all.truncate(1);
    spec.layers.truncate(1);
    all.extend(layers);
    let img = w.image_from_layers(&spec, all)?;
    w.tag("bench", &img.manifest);
    w.finish()?;
    let compressed: u64 = img.layers.iter().map(|l| l.size).sum();
    println!(
        "{}: {} layers, {} files, {} MiB compressed",
        a.out.display(),
        img.layers.len(),
        per_layer * bulk,
        compressed >> 20
    );
    Ok(())
}
