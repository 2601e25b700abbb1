//! Fuzz targets for every parser and decoder a stranger can reach: a plugin (its plan, its
//! calldata, its schema, its component), an agent (MCP and A2A requests), a peer (fleet
//! documents) or whoever can write the host's files (the audit log, the permit journal).
//!
//! Each target is `run(bytes)`, which panics when an oracle fails, not only on a crash: a
//! decoder's round trip, a scope that accepts exactly what names the wallet, `verify` accepting
//! exactly the chains the writer wrote, every MCP/A2A input answered by valid JSON-RPC with the
//! request's id. The same `run` is driven two ways:
//! - under `cargo test` ([`drive`]): the kept corpus (`fuzz/corpus/<target>/`, every crash ever
//!   found included) replayed, then random and mutated inputs from a fixed seed;
//! - under libFuzzer (`src/bin/`, `make fuzz`): coverage-guided, the workspace's crates
//!   instrumented by `scripts/fuzz-rustc`.

pub mod a2a;
pub mod audit_log;
pub mod calldata;
pub mod component;
pub mod fleet_seal;
pub mod mcp;
pub mod params;
pub mod permit_journal;
pub mod plan;
pub mod recipients;

/// A fuzz target: one input, a panic when an oracle fails.
pub type Target = fn(&[u8]);

/// Every target, by name (the names of `src/bin/` and `corpus/`).
pub const TARGETS: [(&str, Target); 10] = [
    ("calldata", calldata::run),
    ("recipients", recipients::run),
    ("plan", plan::run),
    ("params", params::run),
    ("mcp", mcp::run),
    ("a2a", a2a::run),
    ("audit_log", audit_log::run),
    ("permit_journal", permit_journal::run),
    ("fleet_seal", fleet_seal::run),
    ("component", component::run),
];

/// Run `target` over its kept corpus, then over `iterations` random and mutated inputs from a
/// fixed seed (the property-test mode of a fuzz target). Returns how many inputs ran.
pub fn drive(name: &str, target: Target, iterations: usize) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(name);
    let mut corpus: Vec<Vec<u8>> = match std::fs::read_dir(&dir) {
        Ok(entries) => {
            let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            files.sort();
            files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
        }
        Err(_) => Vec::new(),
    };
    for input in &corpus {
        target(input);
    }
    let ran = corpus.len();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    for i in 0..iterations {
        let input = if i % 2 == 0 {
            let len = rng.below(1024);
            (0..len).map(|_| rng.next() as u8).collect()
        } else {
            let pick = rng.below(corpus.len());
            rng.mutate(&corpus[pick])
        };
        target(&input);
    }
    ran + iterations
}

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    /// A few byte flips, insertions, deletions or a truncation of `input`.
    fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..1 + self.below(4) {
            match self.below(4) {
                0 if !out.is_empty() => {
                    let at = self.below(out.len());
                    out[at] ^= 1 << self.below(8);
                }
                1 => {
                    let at = self.below(out.len() + 1);
                    out.insert(at, self.next() as u8);
                }
                2 if !out.is_empty() => {
                    let at = self.below(out.len());
                    out.remove(at);
                }
                _ => out.truncate(self.below(out.len() + 1)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    /// Random inputs per target under `cargo test`; `BARDO_FUZZ_ITERATIONS` raises it.
    fn iterations(default: usize) -> usize {
        std::env::var("BARDO_FUZZ_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }

    macro_rules! property {
        ($name:ident, $n:expr) => {
            #[test]
            fn $name() {
                let ran = super::drive(stringify!($name), super::$name::run, iterations($n));
                assert!(
                    ran > iterations($n),
                    "the kept corpus fuzz/corpus/{} was replayed",
                    stringify!($name)
                );
            }
        };
    }

    property!(calldata, 3000);
    property!(recipients, 3000);
    property!(plan, 3000);
    property!(params, 1000);
    property!(mcp, 3000);
    property!(a2a, 3000);
    property!(audit_log, 300);
    property!(permit_journal, 200);
    property!(fleet_seal, 3000);
    property!(component, 60);
}
