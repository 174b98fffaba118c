//! Times basepress's Kustomize build on the repository's bases and on
//! overlays of them like those the docs show:
//! `cargo run --release --example kustomize_build`.

use std::time::Instant;

use basepress::kustomize::{self, MemFiles, SourceFile};

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = MemFiles::new();
    let mut dirs = Vec::new();
    for version in ["v1.29.0", "v1.30.0"] {
        let dir = root.join("bases").join(version);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("no {}", dir.display());
            return;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&p).unwrap_or_default();
            files.insert(
                &format!("{version}/{name}"),
                SourceFile::new(bytes, p.clone()),
            );
        }
        dirs.push(version.to_string());
        for i in 0..20 {
            let k = format!(
                "resources: [../{version}]
images:
  - name: whystack-agent
    newName: r.io/whystack-agent
    digest: sha256:{i:064}
configMapGenerator:
  - name: whystack-agent-config
    behavior: merge
    literals: [RUNNER_LOG=debug]
patches:
  - patch: |-
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {{name: whystack-agent}}
      spec:
        template:
          spec:
            terminationGracePeriodSeconds: 150
"
            );
            let dir = format!("overlay-{version}-{i}");
            files.insert(
                &format!("{dir}/kustomization.yaml"),
                SourceFile::new(k, "page.md"),
            );
            dirs.push(dir);
        }
    }
    let mut best = f64::MAX;
    for _ in 0..20 {
        let mut cache = kustomize::Cache::default();
        let start = Instant::now();
        let mut objects = 0;
        let mut first_two = 0.0;
        for (i, dir) in dirs.iter().enumerate() {
            if i == 21 {
                first_two = start.elapsed().as_secs_f64() * 1000.0;
            }
            match kustomize::build_with(&files, dir, &mut cache) {
                Ok(b) => objects += b.objects.len(),
                Err(e) => {
                    eprintln!("{dir}: {}", e[0]);
                    return;
                }
            }
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        if ms < best {
            eprintln!("base v1.29.0 and its 20 overlays: {first_two:.2} ms");
        }
        best = best.min(ms);
        if objects == 0 {
            return;
        }
    }
    println!(
        "{} builds (2 bases, {} overlays): best of 20 runs {best:.2} ms",
        dirs.len(),
        dirs.len() - 2
    );
}
