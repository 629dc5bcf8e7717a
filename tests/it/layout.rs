//! DESIGN.md 1: "No import cycles, inside a folder or between folders", and dependencies
//! point one way, down. This test reads every file of the library under `src/` (not
//! `main.rs` nor `bin/`, crates of their own), collects the paths it names (`use crate::…`, `use super::…`, `use
//! self::…` with their `{…}` groups, and the same paths written inline in code), resolves
//! each to the file that defines the item (following a `mod.rs`'s `pub use` re-exports),
//! and fails on a cycle between files of one folder and on a dependency between
//! top-level folders that [`ALLOWED`] does not list. The tools' binary
//! (`src/bin/arbiter-tools/`: `bench`, `board-sim`) is a layer above the whole library,
//! which it reaches through its public API only (`draughts_arbiter::…`, checked by the
//! compiler); its own files are read the same way for cycles. Test modules
//! (`#[cfg(test)]` to the end of a file) are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The layers right below each top-level module, from DESIGN.md's picture (server, web,
/// api, hub, store, tournament, game, clock and notation, rules, with `history` under
/// rules and clock); a module may use these and everything they may use ([`allowed`]).
/// `cli` sits on top and may use anything; above the library, the binaries ([`TOOLS`]).
const ALLOWED: &[(&str, &[&str])] = &[
    ("history", &[]),
    ("rules", &["history"]),
    ("notation", &["rules"]),
    ("clock", &["history"]),
    ("game", &["clock", "notation"]),
    ("tournament", &["game"]),
    ("store", &["tournament"]),
    ("hub", &["store"]),
    ("api", &["hub"]),
    ("web", &["api"]),
    ("server", &["web"]),
];

/// The tools' binary, a crate of its own over the library (`src/bin/arbiter-tools/`).
const TOOLS: &str = "bin/arbiter-tools";

/// Each module with every module below it ([`ALLOWED`], closed downwards).
fn allowed() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let direct: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut out = BTreeMap::new();
    for &(module, _) in ALLOWED {
        let mut below = BTreeSet::new();
        let mut stack: Vec<&str> = direct[module].to_vec();
        while let Some(m) = stack.pop() {
            if below.insert(m) {
                stack.extend_from_slice(direct[m]);
            }
        }
        out.insert(module, below);
    }
    out
}

/// Cycles between files of one folder that are known and must go (each the set of files
/// in one strongly connected group). This list may only shrink: a new cycle fails, and so
/// does an entry that is no longer a cycle (remove it). There are none.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// A module path from the crate root: `["game", "decide"]`; the root is `[]`.
type ModPath = Vec<String>;

struct File {
    /// Paths it names, absolute, and whether each is a `pub use` (a re-export).
    paths: Vec<(bool, ModPath)>,
}

/// Removes comments, string and char literals, and everything from `#[cfg(test)]` on.
fn strip(src: &str) -> String {
    let src = match src.find("#[cfg(test)]") {
        Some(i) => &src[..i],
        None => src,
    };
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'#') | Some(b'"')) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            out.push_str("\"\"");
            i = j + close.len();
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            let lit = if b.get(i + 1) == Some(&b'\\') {
                src[i + 2..].find('\'').map(|k| i + 2 + k)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match lit {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = src[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The paths of one `use` tree (`a::{b, c::{d as e}}`), each as its segments.
fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let close = tree.rfind('}').expect("a use group closes");
        let mut base = prefix.to_vec();
        base.extend(segments(tree[..open].trim_end_matches(':')));
        let inner = &tree[open + 1..close];
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..k], &base, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &base, out);
    } else {
        let mut path = prefix.to_vec();
        let name = tree.split(" as ").next().expect("a path");
        path.extend(segments(name));
        out.push(path);
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every `use` statement (with whether it is `pub`) and every inline path that starts
/// with `crate::`, `super::` or `self::`.
fn named_paths(code: &str) -> Vec<(bool, Vec<String>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut rest = String::with_capacity(code.len());
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !is_ident(b[i - 1]);
        if word_start && code[i..].starts_with("use ") {
            let end = code[i..].find(';').map_or(b.len(), |k| i + k);
            let before = code[..i].trim_end();
            let public = before.ends_with("pub") || {
                before.ends_with(')')
                    && before
                        .rfind("pub(")
                        .is_some_and(|k| !before[k..].contains(['{', ';', '}']))
            };
            let mut paths = Vec::new();
            expand(&code[i + 4..end], &[], &mut paths);
            out.extend(paths.into_iter().map(|p| (public, p)));
            i = end + 1;
            continue;
        }
        rest.push(b[i] as char);
        i += 1;
    }
    let rb = rest.as_bytes();
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = rest[from..].find(root) {
            let at = from + k;
            from = at + root.len();
            if at > 0 && (is_ident(rb[at - 1]) || rb[at - 1] == b':') {
                continue;
            }
            let mut end = at;
            while end < rb.len() && (is_ident(rb[end]) || rb[end] == b':') {
                end += 1;
            }
            out.push((false, segments(&rest[at..end])));
        }
    }
    out
}

/// Makes `path`, as written in module `module`, absolute.
fn absolute(module: &[String], path: &[String]) -> ModPath {
    let mut p = path;
    if p.first().is_some_and(|s| s == "crate") {
        return p[1..].to_vec();
    }
    // In `a/b.rs` (module a::b) `super` is `a`; in `a/mod.rs` (module a) it is the root.
    let mut base = module.to_vec();
    while let Some(first) = p.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        p = &p[1..];
    }
    base.extend(p.iter().cloned());
    base
}

/// Reads the files of one crate under `root` into `files`: the library (`src/`, without
/// `main.rs` and `bin/`, the binaries' crates) or a binary's folder (`src/bin/NAME/`,
/// whose `main.rs` is the crate's root).
fn read_tree(dir: &Path, root: &Path, library: bool, files: &mut BTreeMap<ModPath, File>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            if library && dir == root && path.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            read_tree(&path, root, library, files);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).expect("under src/");
        let mut module: ModPath = rel
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if module == ["main"] {
            if library {
                continue;
            }
            module.pop();
        }
        if module.last().is_some_and(|s| s == "mod" || s == "lib") {
            module.pop();
        }
        let code = strip(&fs::read_to_string(&path).expect("a source file"));
        let paths = named_paths(&code)
            .into_iter()
            .map(|(public, p)| (public, absolute(&module, &p)))
            .collect();
        files.insert(module, File { paths });
    }
}

/// The file that defines what `path` names: the longest prefix that is a file, through
/// its `pub use` re-exports.
fn resolve(files: &BTreeMap<ModPath, File>, path: &[String], depth: u32) -> Option<ModPath> {
    for k in (0..=path.len()).rev() {
        let module = &path[..k];
        let Some(file) = files.get(module) else {
            continue;
        };
        if let Some(name) = path.get(k)
            && depth < 16
            && let Some((_, target)) = file
                .paths
                .iter()
                .find(|(public, p)| *public && p.last() == Some(name))
            && target.as_slice() != path[..=k].as_ref()
        {
            let mut next = target.clone();
            next.extend(path[k + 1..].iter().cloned());
            return resolve(files, &next, depth + 1);
        }
        return Some(module.to_vec());
    }
    None
}

fn top(module: &[String]) -> String {
    module.first().cloned().unwrap_or_else(|| "lib".into())
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("/")
    }
}

/// File-level dependencies of the library (a `pub use` re-export is not one).
fn edges() -> BTreeSet<(ModPath, ModPath)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, true, &mut files);
    assert!(files.len() > 50, "read the source tree");
    assert!(
        !files.keys().any(|m| m.first().is_some_and(|s| s == "bin")),
        "the binaries are not the library's"
    );
    edges_of(&files)
}

/// File-level dependencies of the tools' binary, paths from its own root (`main.rs`).
fn tools_edges() -> BTreeSet<(ModPath, ModPath)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(TOOLS);
    let mut files = BTreeMap::new();
    read_tree(&root, &root, false, &mut files);
    for module in [&[][..], &["bench"], &["board_sim"]] {
        let module: ModPath = module.iter().map(|s| s.to_string()).collect();
        assert!(files.contains_key(&module), "{TOOLS}: {module:?} read");
    }
    edges_of(&files)
}

/// The dependencies between the files of one crate.
fn edges_of(files: &BTreeMap<ModPath, File>) -> BTreeSet<(ModPath, ModPath)> {
    let mut edges = BTreeSet::new();
    for (module, file) in files {
        for (public, path) in &file.paths {
            if *public {
                continue;
            }
            let path: Vec<String> = path.iter().filter(|s| *s != "*").cloned().collect();
            if let Some(target) = resolve(files, &path, 0)
                && target != *module
            {
                edges.insert((module.clone(), target));
            }
        }
    }
    edges
}

/// Strongly connected groups of more than one file (Tarjan).
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<BTreeSet<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on: BTreeSet<&'g ModPath>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(next) = s.graph.get(v) {
            for w in next {
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = BTreeSet::new();
            loop {
                let w = s.stack.pop().expect("on the stack");
                s.on.remove(w);
                group.insert(name(w));
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                s.found.push(group);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn no_import_cycle_between_files_of_a_folder() {
    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (from, to) in edges() {
        if top(&from) == top(&to) {
            graph.entry(from).or_default().insert(to);
        }
    }
    let mut found = cycles(&graph);
    // The tools' crate, its modules named under its folder.
    let tools = tools_edges();
    assert!(!tools.is_empty(), "the tools' files name each other");
    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (from, to) in tools {
        if top(&from) == top(&to) {
            let under = |m: ModPath| -> ModPath {
                let mut p: ModPath = TOOLS.split('/').map(str::to_string).collect();
                p.extend(m);
                p
            };
            graph.entry(under(from)).or_default().insert(under(to));
        }
    }
    found.extend(cycles(&graph));
    let known: Vec<BTreeSet<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<_> = found.iter().filter(|c| !known.contains(c)).collect();
    assert!(new.is_empty(), "import cycles between files: {new:?}");
    let gone: Vec<_> = known.iter().filter(|c| !found.contains(c)).collect();
    assert!(
        gone.is_empty(),
        "no longer a cycle, remove from KNOWN_CYCLES: {gone:?}"
    );
}

#[test]
fn top_level_folders_depend_only_downwards() {
    let allowed = allowed();
    assert!(allowed["server"].contains("history") && !allowed["clock"].contains("rules"));
    let mut wrong = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (from, to) in edges() {
        let (a, b) = (top(&from), top(&to));
        if a == b || a == "cli" || a == "lib" {
            continue;
        }
        seen.insert((a.clone(), b.clone()));
        let ok = allowed
            .get(a.as_str())
            .is_some_and(|t| t.contains(b.as_str()));
        if !ok {
            wrong.insert(format!("{} -> {}", name(&from), name(&to)));
        }
    }
    assert!(wrong.is_empty(), "dependencies not in ALLOWED: {wrong:?}");
    // The reader does see the layers (a parser that found nothing would pass above).
    for edge in [("game", "rules"), ("notation", "rules"), ("api", "hub")] {
        assert!(
            seen.contains(&(edge.0.to_string(), edge.1.to_string())),
            "{edge:?} not found"
        );
    }
}

#[test]
fn the_reader_sees_use_groups_and_inline_paths() {
    let code = strip(
        "use super::a::{B, c::{D as E}};\npub use self::f::G;\n// use crate::x::Y;\n\
         fn h() { let s = \"crate::z::W\"; crate::i::J::k(); }\n#[cfg(test)]\nuse crate::t::U;",
    );
    let paths = named_paths(&code);
    let text: Vec<(bool, String)> = paths.iter().map(|(p, s)| (*p, s.join("::"))).collect();
    assert_eq!(
        text,
        [
            (false, "super::a::B".to_string()),
            (false, "super::a::c::D".to_string()),
            (true, "self::f::G".to_string()),
            (false, "crate::i::J::k".to_string()),
        ]
    );
}

/// DESIGN.md 1 and 12: `rules/`, `notation/`, `clock/`, `game/` and `tournament/` are
/// pure: no async runtime, no gRPC, no I/O, no clock reads, no random source (a
/// tournament's lot gets its seed with the command). Their code (comments, strings and
/// test modules left out) names none of these.
#[test]
fn the_pure_folders_read_no_clock_randomness_or_io() {
    const PURE: [&str; 5] = ["rules", "notation", "clock", "game", "tournament"];
    const FORBIDDEN: [&str; 14] = [
        "tokio",
        "tonic",
        "prost",
        "tracing",
        "std::fs",
        "std::net",
        "std::process",
        "std::thread",
        "SystemTime",
        "Instant::now",
        "Utc::now",
        "Local::now",
        "getrandom",
        "OsRng",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut read = 0;
    for folder in PURE {
        let mut stack = vec![root.join(folder)];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).expect("a pure folder") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    read += 1;
                    let code = strip(&fs::read_to_string(&path).expect("source"));
                    for word in FORBIDDEN {
                        if code.contains(word) {
                            found.push(format!("{} names {word}", path.display()));
                        }
                    }
                }
            }
        }
    }
    assert!(read > 40, "only {read} files read");
    assert!(found.is_empty(), "impure code in a pure folder: {found:#?}");
    // The check sees what it looks for.
    assert!(strip("fn f() { std::fs::read(\"x\"); }").contains("std::fs"));
}
