//! Archetypes and their delegation graph (two-layer-adapter.txt, "Delegation graph"): an
//! archetype is a named role with a profile or a list of categories and the archetypes it may
//! delegate to. A set is valid when it is
//! 1. **explicit** — every delegate is a defined archetype;
//! 2. **acyclic** — no archetype reaches itself;
//! 3. **safety-first** — an archetype that can write delegates to `safety-guardian`;
//! 4. **shallow** — no delegation chain is longer than 3 hops;
//! 5. **terminal** nodes never delegate.
//!
//! Every violation is reported, each naming the archetypes (and the path) involved. The
//! specification's hierarchy ships as the default set (`archetypes.toml` beside this file).

use crate::profile::Profile;
use crate::tool::Category;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// The archetype every writer must delegate to.
pub const SAFETY_GUARDIAN: &str = "safety-guardian";
/// The longest delegation chain, in hops.
pub const MAX_DEPTH: usize = 3;
/// Categories whose tools include writes: an archetype with one of them can write.
const WRITE_CATEGORIES: [Category; 10] = [
    Category::Trading,
    Category::Lending,
    Category::Staking,
    Category::Restaking,
    Category::Derivatives,
    Category::Yield,
    Category::Lp,
    Category::Vault,
    Category::Wallet,
    Category::Fees,
];

/// The specification's hierarchy.
const DEFAULTS: &str = include_str!("archetypes.toml");

/// One archetype as written in TOML (`[archetype.<name>]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Definition {
    #[serde(default)]
    description: String,
    /// A profile spec (`trader`, `trader,vault`), or …
    #[serde(default)]
    profile: Option<String>,
    /// … the categories themselves (`data` is implicit).
    #[serde(default)]
    categories: Vec<String>,
    #[serde(default)]
    delegates_to: Vec<String>,
    #[serde(default)]
    terminal: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    archetype: BTreeMap<String, Definition>,
}

/// A resolved archetype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archetype {
    /// Its name (`trade-executor`).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The profile its session runs with.
    pub profile: Profile,
    /// Whether any of its tools can write.
    pub writes: bool,
    /// The archetypes it may delegate to.
    pub delegates_to: Vec<String>,
    /// A leaf of the graph: it never delegates.
    pub terminal: bool,
}

/// What is wrong with a set of archetypes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchetypeError {
    /// The TOML does not parse.
    #[error("archetypes: {0}")]
    Parse(String),
    /// One archetype's own definition is wrong (profile, categories).
    #[error("archetype `{name}`: {message}")]
    Definition {
        /// The archetype.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A delegate that is not defined (rule 1).
    #[error(
        "archetype `{from}` delegates to `{to}`, which is not defined; define it or remove it from `delegates_to`"
    )]
    Undeclared {
        /// The delegating archetype.
        from: String,
        /// The missing one.
        to: String,
    },
    /// A cycle (rule 2).
    #[error("delegation cycle {}: the graph must be acyclic", path.join(" -> "))]
    Cycle {
        /// The cycle, its first archetype repeated at the end.
        path: Vec<String>,
    },
    /// A writer that does not delegate to `safety-guardian` (rule 3).
    #[error(
        "archetype `{name}` can write ({categories}) but does not delegate to `safety-guardian`; add it to `delegates_to`"
    )]
    WriterWithoutSafety {
        /// The archetype.
        name: String,
        /// Its write categories.
        categories: String,
    },
    /// A chain of more than [`MAX_DEPTH`] hops (rule 4).
    #[error("delegation chain {} is {} hops; at most 3", path.join(" -> "), path.len() - 1)]
    TooDeep {
        /// The chain.
        path: Vec<String>,
    },
    /// A terminal archetype that delegates (rule 5).
    #[error("archetype `{name}` is terminal but delegates to {}; terminal nodes never delegate", to.join(", "))]
    TerminalDelegates {
        /// The archetype.
        name: String,
        /// Its delegates.
        to: Vec<String>,
    },
}

/// A validated set of archetypes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archetypes {
    by_name: BTreeMap<String, Archetype>,
}

fn resolve(name: &str, d: Definition) -> Result<Archetype, ArchetypeError> {
    let bad = |message: String| ArchetypeError::Definition { name: name.to_owned(), message };
    let valid_name =
        !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_name {
        return Err(bad("a name is lowercase letters, digits and '-'".into()));
    }
    let profile = match (d.profile, d.categories.is_empty()) {
        (Some(_), false) => return Err(bad("give `profile` or `categories`, not both".into())),
        (None, true) => return Err(bad("give a `profile` (e.g. \"trader\") or `categories`".into())),
        (Some(spec), true) => Profile::parse(&spec).map_err(|e| bad(e.to_string()))?,
        (None, false) => {
            let mut categories = BTreeSet::new();
            for c in &d.categories {
                categories.insert(Category::parse(c).ok_or_else(|| {
                    let known: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
                    bad(format!("unknown category `{c}`; known: {}", known.join(", ")))
                })?);
            }
            Profile::custom(&format!("archetype:{name}"), categories)
        }
    };
    let writes = !profile.read_only() && WRITE_CATEGORIES.iter().any(|c| profile.categories().contains(c));
    Ok(Archetype {
        name: name.to_owned(),
        description: d.description,
        profile,
        writes,
        delegates_to: d.delegates_to,
        terminal: d.terminal,
    })
}

impl Archetypes {
    /// Parse and validate `toml` (`[archetype.<name>]` tables); every violation is returned.
    pub fn parse(toml: &str) -> Result<Self, Vec<ArchetypeError>> {
        let file: File = toml::from_str(toml).map_err(|e| vec![ArchetypeError::Parse(e.to_string())])?;
        let mut errors = Vec::new();
        let mut by_name = BTreeMap::new();
        for (name, d) in file.archetype {
            match resolve(&name, d) {
                Ok(a) => {
                    by_name.insert(name, a);
                }
                Err(e) => errors.push(e),
            }
        }
        let set = Self { by_name };
        errors.extend(set.violations());
        if errors.is_empty() { Ok(set) } else { Err(errors) }
    }

    /// The specification's hierarchy (golem-instance over the execution archetypes over the
    /// terminal nodes).
    pub fn defaults() -> Self {
        // A unit test holds the shipped file valid.
        Self::parse(DEFAULTS).unwrap_or_else(|e| panic!("the shipped archetypes.toml is invalid: {e:?}"))
    }

    /// The shipped default set's TOML, to copy and edit.
    pub fn defaults_toml() -> &'static str {
        DEFAULTS
    }

    /// One archetype.
    pub fn get(&self, name: &str) -> Option<&Archetype> {
        self.by_name.get(name)
    }

    /// Every archetype, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Archetype> {
        self.by_name.values()
    }

    /// The rules each archetype breaks, in rule order.
    fn violations(&self) -> Vec<ArchetypeError> {
        let mut errors = Vec::new();
        for a in self.by_name.values() {
            for to in a.delegates_to.iter().filter(|to| !self.by_name.contains_key(*to)) {
                errors.push(ArchetypeError::Undeclared { from: a.name.clone(), to: to.clone() });
            }
            if a.terminal && !a.delegates_to.is_empty() {
                errors.push(ArchetypeError::TerminalDelegates {
                    name: a.name.clone(),
                    to: a.delegates_to.clone(),
                });
            }
            if a.writes && !a.delegates_to.iter().any(|d| d == SAFETY_GUARDIAN) {
                let categories: Vec<&str> = WRITE_CATEGORIES
                    .iter()
                    .filter(|c| a.profile.categories().contains(c))
                    .map(|c| c.name())
                    .collect();
                errors.push(ArchetypeError::WriterWithoutSafety {
                    name: a.name.clone(),
                    categories: categories.join(", "),
                });
            }
        }
        match self.cycle() {
            Some(path) => errors.push(ArchetypeError::Cycle { path }),
            // Depth is only defined on a DAG.
            None => {
                if let Some(path) = self.longest_chain().filter(|p| p.len() > MAX_DEPTH + 1) {
                    errors.push(ArchetypeError::TooDeep { path });
                }
            }
        }
        errors
    }

    fn delegates<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a str> {
        self.by_name
            .get(name)
            .into_iter()
            .flat_map(|a| a.delegates_to.iter().map(String::as_str))
            .filter(|d| self.by_name.contains_key(*d))
    }

    /// A cycle, as a path that returns to its start; none in a DAG.
    fn cycle(&self) -> Option<Vec<String>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        fn visit<'a>(
            set: &'a Archetypes,
            name: &'a str,
            marks: &mut BTreeMap<&'a str, Mark>,
            stack: &mut Vec<&'a str>,
        ) -> Option<Vec<String>> {
            marks.insert(name, Mark::Open);
            stack.push(name);
            for next in set.delegates(name) {
                match marks.get(next).copied().unwrap_or(Mark::New) {
                    Mark::Open => {
                        let start = stack.iter().position(|n| *n == next).unwrap_or(0);
                        let mut path: Vec<String> = stack[start..].iter().map(|s| (*s).to_owned()).collect();
                        path.push(next.to_owned());
                        return Some(path);
                    }
                    Mark::New => {
                        if let Some(path) = visit(set, next, marks, stack) {
                            return Some(path);
                        }
                    }
                    Mark::Done => {}
                }
            }
            stack.pop();
            marks.insert(name, Mark::Done);
            None
        }
        let mut marks = BTreeMap::new();
        for name in self.by_name.keys() {
            if marks.get(name.as_str()).copied().unwrap_or(Mark::New) == Mark::New
                && let Some(path) = visit(self, name, &mut marks, &mut Vec::new())
            {
                return Some(path);
            }
        }
        None
    }

    /// The longest delegation chain (names, start to end); call only on a DAG.
    fn longest_chain(&self) -> Option<Vec<String>> {
        fn from<'a>(
            set: &'a Archetypes,
            name: &'a str,
            memo: &mut BTreeMap<&'a str, Vec<&'a str>>,
        ) -> Vec<&'a str> {
            if let Some(p) = memo.get(name) {
                return p.clone();
            }
            let mut best = vec![name];
            for next in set.delegates(name) {
                let tail = from(set, next, memo);
                if tail.len() + 1 > best.len() {
                    best = std::iter::once(name).chain(tail).collect();
                }
            }
            memo.insert(name, best.clone());
            best
        }
        let mut memo = BTreeMap::new();
        self.by_name
            .keys()
            .map(|n| from(self, n, &mut memo))
            .max_by_key(Vec::len)
            .map(|p| p.into_iter().map(str::to_owned).collect())
    }

    /// Each archetype with its depth below the roots (archetypes nobody delegates to), for
    /// printing the graph level by level.
    pub fn levels(&self) -> Vec<(usize, &Archetype)> {
        let delegated: BTreeSet<&str> =
            self.by_name.values().flat_map(|a| a.delegates_to.iter().map(String::as_str)).collect();
        let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
        let mut frontier: Vec<(&str, usize)> = self
            .by_name
            .keys()
            .map(String::as_str)
            .filter(|n| !delegated.contains(n))
            .map(|n| (n, 0))
            .collect();
        while let Some((name, d)) = frontier.pop() {
            if depth.get(name).is_some_and(|&old| old >= d) {
                continue;
            }
            depth.insert(name, d);
            frontier.extend(self.delegates(name).map(|n| (n, d + 1)));
        }
        let mut out: Vec<(usize, &Archetype)> =
            self.by_name.values().map(|a| (depth.get(a.name.as_str()).copied().unwrap_or(0), a)).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.name.cmp(&b.1.name)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(toml: &str) -> Vec<ArchetypeError> {
        Archetypes::parse(toml).expect_err("invalid")
    }

    const GUARD: &str = "[archetype.safety-guardian]\ncategories = [\"safety\"]\nterminal = true\n";

    #[test]
    fn the_shipped_hierarchy_is_valid_and_follows_the_specification() {
        let set = Archetypes::parse(DEFAULTS).unwrap_or_else(|e| panic!("{e:?}"));
        let get = |n: &str| set.get(n).unwrap_or_else(|| panic!("{n}"));
        let top = get("golem-instance");
        for d in [
            "trade-executor",
            "liquidity-manager",
            "vault-manager",
            "vault-strategist",
            "lp-strategist",
            "risk-assessor",
            "memory-consolidator",
        ] {
            assert!(top.delegates_to.iter().any(|x| x == d), "golem-instance -> {d}");
        }
        assert_eq!(get("trade-executor").delegates_to, ["safety-guardian", "risk-assessor"]);
        assert_eq!(
            get("liquidity-manager").delegates_to,
            ["safety-guardian", "risk-assessor", "pool-researcher"]
        );
        assert_eq!(
            get("cross-chain-executor").delegates_to,
            ["safety-guardian", "risk-assessor", "trade-executor"]
        );
        assert_eq!(get("vault-manager").delegates_to, ["safety-guardian", "risk-assessor"]);
        assert_eq!(get("vault-strategist").delegates_to, ["pool-researcher", "risk-assessor"]);
        let terminal: Vec<&str> = set.iter().filter(|a| a.terminal).map(|a| a.name.as_str()).collect();
        assert_eq!(terminal.len(), 12, "{terminal:?}");
        for t in [
            "safety-guardian",
            "risk-assessor",
            "wallet-provisioner",
            "pnl-analyst",
            "pool-researcher",
            "token-analyst",
            "identity-verifier",
            "position-monitor",
            "heartbeat-monitor",
            "memory-consolidator",
            "vault-watchdog",
            "sleepwalker-observer",
        ] {
            assert!(terminal.contains(&t), "{t}");
        }
        for w in ["trade-executor", "liquidity-manager", "cross-chain-executor", "vault-manager"] {
            assert!(get(w).writes, "{w} executes");
        }
        assert!(!get("golem-instance").writes && !get("vault-strategist").writes);
        assert_eq!(Archetypes::defaults(), set);
        let levels = set.levels();
        let depth = |n: &str| levels.iter().find(|(_, a)| a.name == n).map(|(d, _)| *d);
        assert_eq!(depth("golem-instance"), Some(0));
        assert_eq!(depth("trade-executor"), Some(1));
        assert_eq!(depth("safety-guardian"), Some(2));
        assert!(levels.iter().all(|(d, _)| *d <= MAX_DEPTH));
    }

    #[test]
    fn every_rule_broken_once_names_what_broke_it() {
        // Undeclared delegate.
        let e =
            errors(&format!("{GUARD}[archetype.a]\ncategories = [\"data\"]\ndelegates_to = [\"ghost\"]\n"));
        assert_eq!(e, [ArchetypeError::Undeclared { from: "a".into(), to: "ghost".into() }]);
        // A cycle, with its path.
        let e = errors(
            "[archetype.a]\ncategories = [\"data\"]\ndelegates_to = [\"b\"]\n\
             [archetype.b]\ncategories = [\"data\"]\ndelegates_to = [\"c\"]\n\
             [archetype.c]\ncategories = [\"data\"]\ndelegates_to = [\"a\"]\n",
        );
        assert_eq!(e, [ArchetypeError::Cycle { path: vec!["a".into(), "b".into(), "c".into(), "a".into()] }]);
        assert!(e[0].to_string().contains("a -> b -> c -> a"), "{}", e[0]);
        // A writer without safety-guardian.
        let e = errors(&format!("{GUARD}[archetype.trader]\nprofile = \"trader\"\n"));
        assert!(
            matches!(&e[..], [ArchetypeError::WriterWithoutSafety { name, categories }]
            if name == "trader" && categories.contains("trading")),
            "{e:?}"
        );
        // Depth 4.
        let e = errors(
            "[archetype.a]\ncategories = [\"data\"]\ndelegates_to = [\"b\"]\n\
             [archetype.b]\ncategories = [\"data\"]\ndelegates_to = [\"c\"]\n\
             [archetype.c]\ncategories = [\"data\"]\ndelegates_to = [\"d\"]\n\
             [archetype.d]\ncategories = [\"data\"]\ndelegates_to = [\"e\"]\n\
             [archetype.e]\ncategories = [\"data\"]\nterminal = true\n",
        );
        assert_eq!(
            e,
            [ArchetypeError::TooDeep { path: ["a", "b", "c", "d", "e"].map(String::from).to_vec() }]
        );
        assert!(e[0].to_string().contains("is 4 hops"), "{}", e[0]);
        // A terminal node delegating.
        let e = errors(&format!(
            "{GUARD}[archetype.leaf]\ncategories = [\"data\"]\nterminal = true\ndelegates_to = [\"safety-guardian\"]\n"
        ));
        assert_eq!(
            e,
            [ArchetypeError::TerminalDelegates { name: "leaf".into(), to: vec!["safety-guardian".into()] }]
        );
        // Definitions.
        let e = errors("[archetype.x]\ncategories = [\"nonsense\"]\n");
        assert!(e[0].to_string().contains("unknown category `nonsense`"), "{}", e[0]);
        let e = errors("[archetype.x]\nprofile = \"nonsense\"\n");
        assert!(e[0].to_string().contains("unknown profile"), "{}", e[0]);
        let e = errors("[archetype.x]\n");
        assert!(e[0].to_string().contains("give a `profile`"), "{}", e[0]);
        let e = errors("[archetype.x]\nprofile = \"data\"\ncategories = [\"data\"]\n");
        assert!(e[0].to_string().contains("not both"), "{}", e[0]);
        assert!(matches!(&errors("[archetype.x\n")[..], [ArchetypeError::Parse(_)]));
    }

    #[test]
    fn a_read_only_profile_does_not_write_whatever_its_categories() {
        let set = Archetypes::parse("[archetype.watcher]\nprofile = \"observatory\"\n").expect("valid");
        assert!(!set.get("watcher").expect("watcher").writes);
    }
}
