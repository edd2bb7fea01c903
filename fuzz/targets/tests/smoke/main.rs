//! The test command's fuzz smoke, on stable: every target's seeds (`fuzz/corpus/<target>/`,
//! which hold every crash the long runs found), then a few seconds of mutations of them, through
//! the same bodies libFuzzer drives. It is no substitute for the coverage-guided runs
//! (`scripts/fuzz.sh`), but it runs every target's checks on thousands of inputs no one wrote
//! without the second, instrumented build those need.
//!
//! `CONCIERGE_FUZZ_SMOKE_SECS` sets the seconds of mutation per target (default 2);
//! `CONCIERGE_FUZZ_SMOKE_SEED` repeats a run (a failure prints its seed and saves its input).

mod mutate;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use concierge_fuzz::{root, targets};
use fastrand::Rng;

/// Recent mutants are mutated further, so edits stack deeper than one round's four.
const POOL: usize = 256;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = root().join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| std::fs::read(file).expect("a seed"))
        .collect()
}

fn budget() -> Duration {
    let seconds = std::env::var("CONCIERGE_FUZZ_SMOKE_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(seconds)
}

fn seed() -> u64 {
    std::env::var("CONCIERGE_FUZZ_SMOKE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..))
}

/// Runs one input; a failing one is saved where the message says, to become a seed.
fn run(target: &str, body: targets::Body, input: &[u8], seed: u64) {
    if catch_unwind(AssertUnwindSafe(|| body(input))).is_ok() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-smoke")
        .join(target);
    std::fs::create_dir_all(&dir).expect("a directory for the input");
    let file = dir.join(format!("crash-{seed:016x}-{}", input.len()));
    std::fs::write(&file, input).expect("the input saved");
    panic!(
        "{target} failed (panic above) on {} (seed {seed}): {:?}",
        file.display(),
        String::from_utf8_lossy(&input[..input.len().min(300)])
    );
}

fn smoke(target: &str) {
    let body = targets::ALL
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, body)| *body)
        .expect("a target by that name");
    let seeds = seeds(target);
    let seed = seed();
    for input in &seeds {
        run(target, body, input, seed);
    }
    let mut rng = Rng::with_seed(seed);
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let (started, budget) = (Instant::now(), budget());
    let mut runs = 0u64;
    while started.elapsed() < budget {
        let from_pool = !pool.is_empty() && rng.bool();
        let mut input = match (from_pool, seeds.is_empty()) {
            (true, _) => pool[rng.usize(0..pool.len())].clone(),
            (false, false) => seeds[rng.usize(0..seeds.len())].clone(),
            (false, true) => Vec::new(),
        };
        mutate::mutate(&mut rng, &mut input, &seeds);
        run(target, body, &input, seed);
        runs += 1;
        if pool.len() < POOL {
            pool.push(input);
        } else {
            let slot = rng.usize(0..POOL);
            pool[slot] = input;
        }
    }
    println!(
        "{target}: {} seeds, {runs} mutants (seed {seed})",
        seeds.len()
    );
}

macro_rules! smoke {
    ($($target:ident),* $(,)?) => {
        $(#[test] fn $target() { smoke(stringify!($target)); })*

        /// Every libFuzzer target has its body here, its seeds, and a test above.
        #[test]
        fn every_target_of_cargo_fuzz_is_smoked() {
            let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
            let mut fuzzed: Vec<&str> = manifest
                .lines()
                .filter_map(|line| line.strip_prefix("name = \""))
                .filter_map(|rest| rest.strip_suffix('"'))
                .filter(|name| !name.starts_with("concierge-"))
                .collect();
            fuzzed.sort_unstable();
            let mut bodies: Vec<&str> = targets::ALL.iter().map(|(name, _)| *name).collect();
            bodies.sort_unstable();
            let mut smoked = vec![$(stringify!($target)),*];
            smoked.sort_unstable();
            assert_eq!(fuzzed, bodies, "fuzz/Cargo.toml's targets and targets::ALL");
            assert_eq!(fuzzed, smoked, "fuzz/Cargo.toml's targets and the smoke's");
            for target in fuzzed {
                assert!(!seeds(target).is_empty(), "{target} has no seeds");
            }
        }
    };
}

smoke!(
    mcp_request,
    tool_arguments,
    typo3_manifest,
    typo3_records,
    html_markdown,
    product_export,
    buspro_hotels,
    hotel_submit,
    kgqa_request,
    oauth_authorize,
    oauth_token,
    oauth_register,
    oauth_client_metadata,
    oauth_jwt,
    config,
    coffee_menu,
    upstream_answer,
    openapi_document,
);
