//! Writes a deterministic docs project for benchmarks: a basepress project
//! and, with `--hugo`, the same corpus as a Hugo multilingual site.
//!
//! ```sh
//! cargo run --release --example gen_corpus -- --preset large --seed 1 --out /tmp/corpus
//! cargo run --release --example gen_corpus -- --preset 5000 --out /tmp/c5k --hugo /tmp/h5k
//! ```
//!
//! Presets: `small` (1,000 pages), `large` (10,000 pages: 4 languages × 50
//! sections × 50 pages) or a page count. Pages are 400–1,500 words of
//! Markdown with h2/h3 headings, paragraphs, lists, tables, fenced `yaml`
//! and `bash` blocks, inline code and relative links with anchors that all
//! resolve. The same seed always gives the same bytes.

use basepress::analyze::markdown::slugify;
use clap::Parser;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Generates a benchmark corpus.
#[derive(Parser)]
struct Args {
    /// `small` (1,000 pages), `large` (10,000 pages) or a page count.
    #[arg(long, default_value = "small")]
    preset: String,
    /// Seed of the generator: the same seed gives the same corpus.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of languages (es, pt, en, fr, de, it, nl, pl).
    #[arg(long, default_value_t = 4)]
    languages: usize,
    /// Number of bases (releases v1.29.0, v1.30.0, …).
    #[arg(long, default_value_t = 2)]
    versions: usize,
    /// Docs versions: 0 (the default) for none; N for N − 1 frozen release
    /// lines (versions/1.29/, 1.30/, …) and next (content/), the pages
    /// split evenly between them, each version's text its own.
    #[arg(long, default_value_t = 0)]
    docs_versions: usize,
    /// Where the basepress project goes (must not exist or be empty).
    #[arg(long)]
    out: PathBuf,
    /// Also write the same corpus as a Hugo site here.
    #[arg(long)]
    hugo: Option<PathBuf>,
}

/// Files of the repository the corpus copies.
const IMAGE_RELEASES: &str = include_str!("../image-releases.yaml");
const STYLE_CSS: &str = include_str!("../src/render/default/style.css");
const BASE_FILES: &[(&str, &str)] = &[
    (
        "kustomization.yaml",
        include_str!("../bases/v1.29.0/kustomization.yaml"),
    ),
    ("config.env", include_str!("../bases/v1.29.0/config.env")),
    (
        "namespace.yaml",
        include_str!("../bases/v1.29.0/namespace.yaml"),
    ),
    (
        "networkpolicy.yaml",
        include_str!("../bases/v1.29.0/networkpolicy.yaml"),
    ),
    (
        "statefulset.yaml",
        include_str!("../bases/v1.29.0/statefulset.yaml"),
    ),
];

const LANGUAGES: &[(&str, &str)] = &[
    ("es", "Español"),
    ("pt", "Português"),
    ("en", "English"),
    ("fr", "Français"),
    ("de", "Deutsch"),
    ("it", "Italiano"),
    ("nl", "Nederlands"),
    ("pl", "Polski"),
];

/// Environment keys every release reads (`versions: "*"`), safe to mention.
const ENV_KEYS: &[&str] = &[
    "RUNNER_DRAIN_TIMEOUT_MS",
    "RUNNER_LEARNED_FLUSH_INTERVAL_MS",
    "RUNNER_INSTANCE_ID",
    "RUNNER_GKE_TOKEN_PATH",
    "RUNNER_SECRET_STORE_MODE",
];

const CODE_WORDS: &[&str] = &[
    "kubectl",
    "StatefulSet",
    "ConfigMap",
    "kustomization.yaml",
    "terminationGracePeriodSeconds",
    "readOnlyRootFilesystem",
    "runAsNonRoot",
    "whystack-health",
    "--dry-run=server",
    "files.txt",
    "SHA256SUMS",
    "apiVersion",
];

/// A tiny deterministic PRNG (SplitMix64): no dependency, same numbers on
/// every platform.
struct Rng(u64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for p in parts {
            r.0 ^= p.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            r.next();
        }
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn hash(parts: &[u64]) -> u64 {
    Rng::new(parts).next()
}

/// Pseudo-words of one language: syllables of its own spelling plus its
/// short function words, so text, accents and slugs look like the language.
struct Lang {
    code: &'static str,
    name: &'static str,
    syllables: &'static [&'static str],
    small: &'static [&'static str],
}

const VOCABULARY: usize = 4000;

impl Lang {
    fn new(i: usize) -> Lang {
        let (code, name) = LANGUAGES[i];
        let (syllables, small): (&[&str], &[&str]) = match code {
            "es" => (
                &[
                    "ca", "de", "la", "men", "to", "ción", "ra", "pe", "ti", "ná", "dor", "es",
                    "por", "sa", "lu", "gra", "ble", "mo", "re", "ña", "vi", "gu", "tra", "cue",
                    "bo", "sí", "na", "li", "co", "ár",
                ],
                &[
                    "el", "la", "de", "que", "y", "en", "los", "se", "del", "las", "un", "por",
                    "con", "una", "para", "es", "al", "más",
                ],
            ),
            "pt" => (
                &[
                    "ção", "de", "ma", "nho", "ão", "pa", "ra", "te", "lo", "vo", "mi", "gem",
                    "do", "es", "ta", "quei", "ri", "cu", "bé", "so", "ga", "fi", "lha", "ro",
                    "ve", "ne", "tô", "çar", "bu", "ên",
                ],
                &[
                    "o", "a", "de", "que", "e", "em", "os", "se", "do", "as", "um", "por", "com",
                    "uma", "para", "é", "ao", "não",
                ],
            ),
            "fr" => (
                &[
                    "le", "ment", "ré", "tion", "con", "dé", "eur", "ou", "pro", "té", "ai", "ge",
                    "ver", "sé", "ble", "ri", "ca", "mè", "ter", "que", "çon", "ne", "pa", "ti",
                    "lo", "vé", "ra", "eu", "au", "ê",
                ],
                &[
                    "le", "la", "de", "que", "et", "en", "les", "se", "du", "des", "un", "par",
                    "avec", "une", "pour", "est", "au", "à",
                ],
            ),
            _ => (
                &[
                    "the", "ing", "er", "con", "tion", "al", "re", "de", "ment", "pro", "com",
                    "ter", "ver", "sta", "ble", "ly", "ex", "port", "ser", "vice", "work", "load",
                    "clu", "ster", "node", "net", "ed", "in", "for", "mat",
                ],
                &[
                    "the", "a", "of", "that", "and", "in", "to", "is", "it", "for", "on", "with",
                    "as", "by", "this", "an", "be", "or",
                ],
            ),
        };
        Lang {
            code,
            name,
            syllables,
            small,
        }
    }

    /// Word number `i` of the language's vocabulary.
    fn word(&self, i: u32) -> String {
        if (i as usize) < self.small.len() {
            return self.small[i as usize].to_string();
        }
        let h = hash(&[0x77, i as u64]);
        let n = 1 + (h % 3) as usize;
        let mut w = String::new();
        for k in 0..n {
            let s = (h >> (8 + 8 * k)) as usize % self.syllables.len();
            w.push_str(self.syllables[s]);
        }
        w
    }
}

/// A word index, frequent words more often (a rough Zipf).
fn word_index(rng: &mut Rng, small: usize) -> u32 {
    if rng.percent(35) {
        return rng.below(small) as u32;
    }
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (small + (u * u * (VOCABULARY - small) as f64) as usize) as u32
}

fn capitalize(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// What every language's copy of one page shares: its place and headings,
/// as word indices, and its length.
struct Outline {
    /// Path below `content/<lang>/`.
    rel: String,
    section: Option<usize>,
    weight: usize,
    title: Vec<u32>,
    /// `(level, words)`; a `None` word list is the repeated "example"
    /// heading, which exercises the `-1`, `-2` suffixes of ids.
    headings: Vec<(u8, Option<Vec<u32>>)>,
    words: usize,
}

fn heading_text(lang: &Lang, words: &Option<Vec<u32>>) -> String {
    match words {
        None => capitalize(&lang.word(1000)),
        Some(ws) => {
            let t: Vec<String> = ws.iter().map(|&w| lang.word(w)).collect();
            capitalize(&t.join(" "))
        }
    }
}

/// Heading ids the way basepress makes them: slugs, unique in the page.
fn heading_ids(lang: &Lang, o: &Outline) -> Vec<String> {
    let mut used = HashSet::new();
    o.headings
        .iter()
        .map(|(_, w)| {
            let base = slugify(&heading_text(lang, w));
            let mut id = base.clone();
            let mut n = 1;
            while used.contains(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            used.insert(id.clone());
            id
        })
        .collect()
}

fn outline(seed: u64, page: usize, rel: String, section: Option<usize>, weight: usize) -> Outline {
    let mut rng = Rng::new(&[seed, 1, page as u64]);
    let title = (0..rng.range(2, 5))
        .map(|_| word_index(&mut rng, 18))
        .collect();
    let mut headings = Vec::new();
    for _ in 0..rng.range(3, 6) {
        let words = (0..rng.range(1, 4))
            .map(|_| 18 + rng.below(400) as u32)
            .collect();
        headings.push((2, Some(words)));
        for _ in 0..rng.range(0, 2) {
            if rng.percent(30) {
                headings.push((3, None));
            } else {
                let words = (0..rng.range(2, 5))
                    .map(|_| word_index(&mut rng, 18))
                    .collect();
                headings.push((3, Some(words)));
            }
        }
    }
    Outline {
        rel,
        section,
        weight,
        title,
        headings,
        words: rng.range(420, 1330),
    }
}

/// The corpus's pages, the same in every language.
struct Corpus {
    seed: u64,
    langs: Vec<Lang>,
    versions: Vec<String>,
    /// Every release of the image data: the bases' and the frozen lines'.
    releases: Vec<String>,
    pages: Vec<Outline>,
    /// Pages of each section, by index in `pages`; the first is its index.md.
    sections: Vec<Vec<usize>>,
    /// Heading ids per language, per page.
    ids: Vec<Vec<Vec<String>>>,
}

impl Corpus {
    fn new(seed: u64, total: usize, languages: usize, versions: usize) -> Corpus {
        let langs: Vec<Lang> = (0..languages).map(Lang::new).collect();
        let per_lang = (total / languages).max(2);
        let rest = per_lang - 1;
        let n_sections = rest.min(50);
        let mut pages = vec![outline(seed, 0, "index.md".into(), None, 1)];
        let mut sections = Vec::new();
        for s in 0..n_sections {
            let count = rest / n_sections + usize::from(s < rest % n_sections);
            let mut members = Vec::new();
            for p in 0..count {
                let rel = if p == 0 {
                    format!("topic-{:02}/index.md", s + 1)
                } else {
                    format!("topic-{:02}/page-{:03}.md", s + 1, p)
                };
                let weight = (s + 1) * 1000 + p * 10;
                members.push(pages.len());
                pages.push(outline(seed, pages.len(), rel, Some(s), weight));
            }
            sections.push(members);
        }
        let ids = langs
            .iter()
            .map(|l| pages.iter().map(|o| heading_ids(l, o)).collect())
            .collect();
        let versions: Vec<String> = (0..versions).map(|i| format!("1.{}.0", 29 + i)).collect();
        Corpus {
            seed,
            langs,
            releases: versions.clone(),
            versions,
            pages,
            sections,
            ids,
        }
    }
}

/// A link as basepress reads it and as the Hugo copy writes it.
struct LinkDest {
    basepress: String,
    hugo: String,
}

/// One page's Markdown for both tools: the text is the same, only the
/// destinations of links to other pages differ.
struct Writer<'a> {
    corpus: &'a Corpus,
    lang: usize,
    page: usize,
    rng: Rng,
    md: String,
    hugo: String,
}

impl<'a> Writer<'a> {
    fn lang(&self) -> &'a Lang {
        &self.corpus.langs[self.lang]
    }

    fn push(&mut self, s: &str) {
        self.md.push_str(s);
        self.hugo.push_str(s);
    }

    fn word(&mut self) -> String {
        let small = self.lang().small.len();
        let i = word_index(&mut self.rng, small);
        self.lang().word(i)
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    /// Where a link to page `to` (and heading `h`) goes from this page.
    fn dest(&self, to: usize, h: Option<usize>) -> LinkDest {
        let anchor = h.map_or(String::new(), |h| {
            format!("#{}", self.corpus.ids[self.lang][to][h])
        });
        if to == self.page {
            return LinkDest {
                basepress: anchor.clone(),
                hugo: anchor,
            };
        }
        let from = &self.corpus.pages[self.page];
        let target = &self.corpus.pages[to];
        let relative = match (from.section, target.section) {
            (Some(a), Some(b)) if a == b => target.rel.rsplit('/').next().unwrap().to_string(),
            (Some(_), _) => format!("../{}", target.rel),
            (None, _) => target.rel.clone(),
        };
        let hugo_path = match target.rel.strip_suffix("index.md") {
            Some(dir) => format!("/{dir}_index.md"),
            None => format!("/{}", target.rel),
        };
        LinkDest {
            basepress: format!("{relative}{anchor}"),
            hugo: format!("{{{{< relref \"{hugo_path}{anchor}\" >}}}}"),
        }
    }

    fn link(&mut self, to: usize, h: Option<usize>, text: &str) {
        let d = self.dest(to, h);
        let _ = write!(self.md, "[{text}]({})", d.basepress);
        let _ = write!(self.hugo, "[{text}]({})", d.hugo);
    }

    /// A link to a random place of the site, most often near this page.
    fn random_link(&mut self) {
        let n = self.rng.range(1, 3);
        let text = self.words(n);
        let pages = &self.corpus.pages;
        let to = match self.rng.below(100) {
            0..=29 => self.page,
            30..=64 => match pages[self.page].section {
                Some(s) => *self.rng.pick(&self.corpus.sections[s]),
                None => self.rng.below(pages.len()),
            },
            65..=92 => self.rng.below(pages.len()),
            93..=95 => 0,
            _ => {
                let v = self.rng.pick(&self.corpus.versions).clone();
                let dest = format!("/kubernetes/v{v}/base/files.txt");
                let _ = write!(self.md, "[{text}]({dest})");
                let _ = write!(self.hugo, "[{text}]({dest})");
                return;
            }
        };
        let n_headings = pages[to].headings.len();
        let h = if to == self.page || self.rng.percent(70) {
            Some(self.rng.below(n_headings))
        } else {
            None
        };
        self.link(to, h, &text);
    }

    fn sentence(&mut self) {
        let n = self.rng.range(6, 18);
        let mut first = true;
        for _ in 0..n {
            if !first {
                self.push(" ");
            }
            match self.rng.below(100) {
                0..=3 => {
                    let w = *self.rng.pick(CODE_WORDS);
                    self.push(&format!("`{w}`"));
                }
                4 => {
                    let k = *self.rng.pick(ENV_KEYS);
                    self.push(&format!("`{k}`"));
                }
                5..=6 => {
                    let w = self.word();
                    self.push(&format!("**{w}**"));
                }
                7 => {
                    let w = self.word();
                    self.push(&format!("*{w}*"));
                }
                _ => {
                    let w = self.word();
                    let w = if first { capitalize(&w) } else { w };
                    self.push(&w);
                }
            }
            first = false;
        }
        let end = if self.rng.percent(10) { ":" } else { "." };
        self.push(end);
    }

    fn paragraph(&mut self) {
        let sentences = self.rng.range(2, 6);
        for i in 0..sentences {
            if i > 0 {
                self.push(" ");
            }
            self.sentence();
            if self.rng.percent(25) {
                self.push(" ");
                self.random_link();
                self.push(".");
            }
        }
        self.push("\n\n");
    }

    fn list(&mut self) {
        let ordered = self.rng.percent(40);
        for i in 0..self.rng.range(3, 6) {
            if ordered {
                self.push(&format!("{}. ", i + 1));
            } else {
                self.push("- ");
            }
            let n = self.rng.range(3, 12);
            let text = capitalize(&self.words(n));
            self.push(&text);
            if self.rng.percent(30) {
                self.push(": ");
                self.random_link();
            } else if self.rng.percent(20) {
                let k = *self.rng.pick(ENV_KEYS);
                self.push(&format!(" (`{k}`)"));
            }
            self.push(";\n");
        }
        self.push("\n");
    }

    fn table(&mut self) {
        let cols = self.rng.range(2, 4);
        let header: Vec<String> = (0..cols).map(|_| capitalize(&self.word())).collect();
        self.push(&format!("| {} |\n", header.join(" | ")));
        self.push(&format!("|{}\n", " --- |".repeat(cols)));
        for _ in 0..self.rng.range(2, 6) {
            let mut cells = Vec::new();
            for c in 0..cols {
                if c == 0 && self.rng.percent(40) {
                    cells.push(format!("`{}`", self.rng.pick(ENV_KEYS)));
                } else {
                    let n = self.rng.range(1, 5);
                    cells.push(self.words(n));
                }
            }
            self.push(&format!("| {} |\n", cells.join(" | ")));
        }
        self.push("\n");
    }

    fn ascii_word(&mut self) -> String {
        let w = self.word();
        slugify(&w)
    }

    fn yaml_block(&mut self) {
        let name = self.ascii_word();
        let mut y = format!(
            "```yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-config\n  namespace: whystack-agent\n  labels:\n    app.kubernetes.io/name: whystack-agent\ndata:\n"
        );
        for i in 0..self.rng.range(2, 6) {
            if self.rng.percent(40) {
                // Each key at most once: duplicate keys are invalid YAML.
                let k = ENV_KEYS[(i + self.rng.below(2)) % ENV_KEYS.len()];
                let k = if y.contains(k) {
                    ENV_KEYS[i % ENV_KEYS.len()]
                } else {
                    k
                };
                if !y.contains(k) {
                    let _ = writeln!(y, "  {k}: \"{}\"", self.rng.range(1, 600) * 1000);
                }
            } else {
                let k = self.ascii_word();
                let n = self.rng.range(1, 4);
                let v = self.words(n);
                let _ = writeln!(y, "  {k}-{i}{}: \"{v}\"", self.rng.below(100));
            }
        }
        if self.rng.percent(50) {
            y.push_str("# ");
            let n = self.rng.range(3, 8);
            y.push_str(&self.words(n));
            y.push('\n');
        }
        y.push_str("```\n\n");
        self.push(&y);
    }

    fn bash_block(&mut self) {
        let v = self.rng.pick(&self.corpus.versions).clone();
        let name = self.ascii_word();
        let mut b = String::from("```bash\n");
        match self.rng.below(3) {
            0 => {
                let _ = write!(
                    b,
                    "VERSION={v}\nBASE=\"https://docs.example.org/kubernetes/v${{VERSION#v}}/base\"\nmkdir -p base\nFILES=$(curl -fsSL \"$BASE/files.txt\") &&\n  for f in $FILES; do curl -fsSL -o \"base/$f\" \"$BASE/$f\"; done\n"
                );
            }
            1 => {
                let _ = write!(
                    b,
                    "kubectl apply -k overlays/{name} --dry-run=server\nkubectl -n whystack-agent rollout status statefulset/whystack-agent --timeout=5m\n"
                );
            }
            _ => {
                let _ = write!(
                    b,
                    "# {}\nkubectl -n whystack-agent logs statefulset/whystack-agent --since=10m | grep -i {name}\nkubectl -n whystack-agent get pods -o wide\n",
                    self.words(4)
                );
            }
        }
        b.push_str("```\n\n");
        self.push(&b);
    }
}

/// The Markdown of one page in one language, for basepress and for Hugo.
fn page_markdown(corpus: &Corpus, lang: usize, page: usize) -> (String, String) {
    let o = &corpus.pages[page];
    let mut w = Writer {
        corpus,
        lang,
        page,
        rng: Rng::new(&[corpus.seed, 2, page as u64]),
        md: String::new(),
        hugo: String::new(),
    };
    let l = w.lang();
    let title = capitalize(
        &o.title
            .iter()
            .map(|&i| l.word(i))
            .collect::<Vec<_>>()
            .join(" "),
    );
    let n = w.rng.range(8, 20);
    let description = capitalize(&w.words(n));
    w.push(&format!(
        "---\ntitle: \"{title}\"\nweight: {}\ndescription: \"{description}.\"\n---\n\n",
        o.weight
    ));
    let body_start = w.md.len();
    w.paragraph();

    // Index pages list what is below them.
    let children: Vec<usize> = match (o.section, page) {
        (None, _) => corpus.sections.iter().map(|s| s[0]).collect(),
        (Some(s), p) if corpus.sections[s][0] == p => corpus.sections[s][1..].to_vec(),
        _ => Vec::new(),
    };
    for c in children {
        let text = capitalize(
            &corpus.pages[c]
                .title
                .iter()
                .map(|&i| l.word(i))
                .collect::<Vec<_>>()
                .join(" "),
        );
        w.push("- ");
        w.link(c, None, &text);
        w.push("\n");
    }
    w.push("\n");

    // Words as `wc -w` counts them (code and markup included), so every
    // page stays within 400–1,500 whatever its mix of blocks.
    let tokens = |w: &Writer| w.md[body_start..].split_whitespace().count();
    let start = tokens(&w);
    let n = o.headings.len();
    for (k, (level, words)) in o.headings.iter().enumerate() {
        let hashes = "#".repeat(*level as usize);
        let text = heading_text(l, words);
        w.push(&format!("{hashes} {text}\n\n"));
        let goal = start + o.words.saturating_sub(start) * (k + 1) / n;
        w.paragraph();
        while tokens(&w) < goal {
            match w.rng.below(100) {
                0..=49 => w.paragraph(),
                50..=64 => w.list(),
                65..=74 => w.table(),
                75..=87 => w.yaml_block(),
                _ => w.bash_block(),
            }
        }
    }
    (w.md, w.hugo)
}

/// The English interface strings, for languages basepress has none of.
const EN_STRINGS: &str = include_str!("../src/load/i18n/en.yaml");

fn write(path: &Path, text: impl AsRef<[u8]>) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn ensure_empty(dir: &Path) {
    if let Ok(mut d) = std::fs::read_dir(dir) {
        if d.next().is_some() {
            eprintln!("gen_corpus: {} exists and is not empty", dir.display());
            std::process::exit(2);
        }
    }
}

fn site_yaml(corpus: &Corpus) -> String {
    let mut s = String::from(
        "# basepress configuration of a generated benchmark corpus.\ntitle: whystack agent\nbase_url: https://docs.example.org\ndefault_language: es\nlanguages:\n",
    );
    for l in &corpus.langs {
        let _ = write!(s, "  - code: {}\n    name: {}\n", l.code, l.name);
    }
    s.push_str("image:\n  name: whystack-agent\n  releases: image-releases.yaml\n");
    s
}

/// The repository's image data with the corpus's releases.
fn image_releases(corpus: &Corpus) -> String {
    let releases = format!("releases: [{}]", corpus.releases.join(", "));
    IMAGE_RELEASES
        .lines()
        .map(|l| {
            if l.starts_with("releases:") {
                releases.as_str()
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn hugo_config(corpus: &Corpus) -> String {
    let mut s = String::from(
        r##"baseURL = "https://docs.example.org/"
title = "whystack agent"
defaultContentLanguage = "es"
defaultContentLanguageInSubdir = true
disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT"]
enableRobotsTXT = false

[markup.highlight]
  codeFences = true
  noClasses = false
  guessSyntax = false

[markup.goldmark.parser]
  autoHeadingIDType = "github-ascii"

[markup.tableOfContents]
  startLevel = 2
  endLevel = 3
"##,
    );
    for (i, l) in corpus.langs.iter().enumerate() {
        let _ = write!(
            s,
            "\n[languages.{code}]\n  contentDir = \"content/{code}\"\n  languageName = \"{name}\"\n  weight = {w}\n",
            code = l.code,
            name = l.name,
            w = i + 1
        );
    }
    s
}

/// Layouts that do what basepress's default templates do: the same shell,
/// language switcher, navigation, pager and table of contents. Above 300
/// pages a language, basepress's sidebar lists every section but opens only
/// the current one with its pages; so does this one.
const HUGO_BASEOF: &str = r##"<!doctype html>
<html lang="{{ .Language.Lang }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ .Title }} · {{ site.Title }}</title>
{{ with .Description }}<meta name="description" content="{{ . }}">
{{ end }}<link rel="stylesheet" href="/assets/style.css">
{{ range .AllTranslations }}<link rel="alternate" hreflang="{{ .Language.Lang }}" href="{{ .Permalink }}">
{{ end }}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="{{ site.Home.RelPermalink }}">{{ site.Title }}</a>
  <nav class="languages" aria-label="Languages">
    <ul>
    {{ $cur := . }}{{ range .AllTranslations }}
      <li><a href="{{ .RelPermalink }}" hreflang="{{ .Language.Lang }}" lang="{{ .Language.Lang }}"{{ if eq .Language.Lang $cur.Language.Lang }} aria-current="page"{{ end }}>{{ .Language.LanguageName }}</a></li>
    {{ end }}
    </ul>
  </nav>
</header>
{{ block "main" . }}{{ end }}
</body>
</html>
"##;

const HUGO_MAIN: &str = r##"{{ define "main" }}
<div class="layout">
  <nav class="sidebar" aria-label="Navigation">
    {{ $cur := . }}{{ $pages := site.Pages.ByWeight }}{{ $sec := .CurrentSection }}
    <ul>
    {{ range site.Sections.ByWeight }}{{ if eq . $sec }}
      <li class="folder"><details open><summary><a href="{{ .RelPermalink }}"{{ if eq .RelPermalink $cur.RelPermalink }} aria-current="page"{{ end }}>{{ .Title }}</a></summary>
      <ul>{{ range .Pages.ByWeight }}
        <li><a href="{{ .RelPermalink }}"{{ if eq .RelPermalink $cur.RelPermalink }} aria-current="page"{{ end }}>{{ .Title }}</a></li>
      {{ end }}</ul></details></li>
    {{ else }}
      <li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>
    {{ end }}{{ end }}
    </ul>
  </nav>
  <main id="main">
    <article>
      {{ .Content }}
    </article>
    <nav class="pager" aria-label="Pager">
      {{ with $pages.Prev . }}<a class="previous" rel="prev" href="{{ .RelPermalink }}">← {{ .Title }}</a>{{ end }}
      {{ with $pages.Next . }}<a class="next" rel="next" href="{{ .RelPermalink }}">{{ .Title }} →</a>{{ end }}
    </nav>
  </main>
  <nav class="toc" aria-label="On this page">
    <p>On this page</p>
    {{ .TableOfContents }}
  </nav>
</div>
{{ end }}
"##;

const HUGO_404: &str = r##"<!doctype html>
<html lang="{{ .Language.Lang }}">
<head><meta charset="utf-8"><title>404 · {{ site.Title }}</title><link rel="stylesheet" href="/assets/style.css"></head>
<body><main id="main" class="not-found"><h1>404</h1>
<ul>{{ range site.Languages }}<li lang="{{ .Lang }}"><a href="/{{ .Lang }}/">{{ .LanguageName }}</a></li>{{ end }}</ul>
</main></body>
</html>
"##;

fn main() {
    let args = Args::parse();
    let total = match args.preset.as_str() {
        "small" => 1000,
        "large" => 10_000,
        n => n.parse().unwrap_or_else(|_| {
            eprintln!("gen_corpus: --preset is small, large or a page count, not `{n}`");
            std::process::exit(2);
        }),
    };
    if args.languages == 0 || args.languages > LANGUAGES.len() || args.versions == 0 {
        eprintln!(
            "gen_corpus: --languages is 1 to {}, --versions at least 1",
            LANGUAGES.len()
        );
        std::process::exit(2);
    }
    let docs_versions = args.docs_versions.max(1);
    let mut corpus = Corpus::new(
        args.seed,
        total / docs_versions,
        args.languages,
        args.versions,
    );
    // Each frozen line needs a release of the image; the bases stay few.
    let lines: Vec<String> = (0..docs_versions - 1)
        .map(|i| format!("1.{}", 29 + i))
        .collect();
    let mut releases = corpus.versions.clone();
    for l in &lines {
        let r = format!("{l}.0");
        if !releases.contains(&r) {
            releases.push(r);
        }
    }
    corpus.releases = releases;
    ensure_empty(&args.out);
    if let Some(h) = &args.hugo {
        ensure_empty(h);
    }

    let out = &args.out;
    let mut site = site_yaml(&corpus);
    if args.docs_versions > 0 {
        site.push_str("versions:\n  next: true\n");
        let lock: String = lines.iter().map(|l| format!("{l}\n")).collect();
        write(&out.join("versions/versions.lock"), lock);
    }
    write(&out.join("site.yaml"), site);
    let releases = image_releases(&corpus);
    write(&out.join("image-releases.yaml"), &releases);
    // basepress has interface strings for es, pt and en; the others get
    // the English ones (the benchmark measures the work, not the words).
    for lang in &corpus.langs {
        if !["es", "pt", "en"].contains(&lang.code) {
            write(&out.join(format!("i18n/{}.yaml", lang.code)), EN_STRINGS);
        }
    }
    for v in &corpus.versions {
        for (name, text) in BASE_FILES {
            write(&out.join(format!("bases/v{v}/{name}")), text);
        }
    }
    if let Some(h) = &args.hugo {
        write(&h.join("config.toml"), hugo_config(&corpus));
        write(&h.join("layouts/_default/baseof.html"), HUGO_BASEOF);
        for name in ["single.html", "list.html"] {
            write(&h.join("layouts/_default").join(name), HUGO_MAIN);
        }
        write(&h.join("layouts/index.html"), HUGO_MAIN);
        write(&h.join("layouts/404.html"), HUGO_404);
        write(&h.join("static/assets/style.css"), STYLE_CSS);
        // Hugo copies static files; basepress publishes the same bases.
        for v in &corpus.versions {
            for (name, text) in BASE_FILES {
                write(&h.join(format!("static/kubernetes/v{v}/base/{name}")), text);
            }
        }
    }

    let mut words = (usize::MAX, 0usize, 0usize);
    // (folder of the version's content, its Hugo section, a line of text
    // of its own); next is the last.
    let mut folders: Vec<(PathBuf, String, String)> = lines
        .iter()
        .map(|l| {
            (
                out.join("versions").join(l).join("content"),
                format!("v{l}/"),
                format!("\nThis page documents release line {l}.\n"),
            )
        })
        .collect();
    folders.push((out.join("content"), String::new(), String::new()));
    if args.docs_versions > 0 {
        if let Some(next) = folders.last_mut() {
            next.1 = "next/".into();
            next.2 = "\nThis page documents the coming release.\n".into();
        }
    }
    for (li, l) in corpus.langs.iter().enumerate() {
        for (pi, o) in corpus.pages.iter().enumerate() {
            let (md, hugo) = page_markdown(&corpus, li, pi);
            let body = md.split("\n---\n").nth(1).unwrap_or("");
            let n = body.split_whitespace().count();
            words = (words.0.min(n), words.1.max(n), words.2 + n);
            for (dir, section, own) in &folders {
                write(&dir.join(l.code).join(&o.rel), format!("{md}{own}"));
                if let Some(h) = &args.hugo {
                    let rel = match o.rel.strip_suffix("index.md") {
                        Some(dir) => format!("{dir}_index.md"),
                        None => o.rel.clone(),
                    };
                    let hugo = hugo.replace("relref \"/", &format!("relref \"/{section}"));
                    write(
                        &h.join("content").join(l.code).join(section).join(rel),
                        format!("{hugo}{own}"),
                    );
                }
            }
        }
    }
    let pages = corpus.langs.len() * corpus.pages.len() * folders.len();
    eprintln!(
        "gen_corpus: {pages} pages ({} languages × {} docs versions × {} sections), {} bases, words per page {}–{} (mean {})",
        corpus.langs.len(),
        folders.len(),
        corpus.sections.len(),
        corpus.versions.len(),
        words.0,
        words.1,
        words.2 * folders.len() / pages.max(1)
    );
}
