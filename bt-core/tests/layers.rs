//! Keeps the layering stated in `src/lib.rs` true: each folder of `src/`
//! is a layer, and code refers to `crate::` paths of its own layer or of
//! the layers below it only. `raw.rs` (with its folder `raw/`), the one
//! `unsafe` module, is the floor: any layer may use it, and it uses nothing but the behavior
//! contract it erases (`decl/behavior.rs`) and the tunables' table whose
//! values it reads (`decl::tune::Tunables`, and `decl::tune::TunableDecl`
//! for the defaults); the contract uses nothing
//! above it but raw's `PersistFns`, the erased save and restore of a
//! memory block.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a folder may refer to its own and to earlier
/// folders. Folders on one rank do not refer to each other.
const LAYERS: &[(&str, u8)] = &[
    ("raw", 0),
    ("decl", 1),
    ("tree", 2),
    ("compile", 3),
    ("memory", 4),
    ("interp", 5),
    ("crowd", 6),
    ("debug", 7),
    ("persist", 7),
    ("tune_file", 7),
    // The public macros: glue on top, as `lib.rs` is.
    ("macros", 8),
];

/// The floor module and the only module it may refer to.
const FLOOR: &str = "raw";
const FLOOR_MAY_USE: &str = "decl::behavior";
/// The other items the floor may name: the tunables' table, an immutable
/// declaration whose address and length a read of a crowd's values checks,
/// and its tunables' declarations, whose defaults fill a table's block of
/// defaults.
const FLOOR_MAY_READ: &[&str] = &["decl::tune::Tunables", "decl::tune::TunableDecl"];
/// The one item of the floor the behavior contract names.
const CONTRACT_MAY_USE: &str = "raw::PersistFns";

fn rank(folder: &str) -> Option<u8> {
    LAYERS.iter().find(|(f, _)| *f == folder).map(|&(_, r)| r)
}

/// One reference from a source file to a `crate::` path.
#[derive(Debug)]
struct Reference {
    line: usize,
    /// The path below `crate::`, with root re-exports resolved to their
    /// folder (`crate::TickInput` → `decl::TickInput`).
    path: String,
}

/// The `crate::` paths a file's code refers to (comments skipped), with
/// braces of `use` lines expanded one level.
fn references(source: &str, reexports: &BTreeMap<String, String>) -> Vec<Reference> {
    let mut out = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break; // Unit tests, at the end of a file, may use any layer.
        }
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().last();
            rest = &rest[at + "crate::".len()..];
            if before == Some('$') || before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':').to_string();
            let first = path.split("::").next().unwrap_or("");
            let path = match reexports.get(first) {
                Some(module) => format!("{module}::{path}"),
                None => path,
            };
            out.push(Reference { line: n + 1, path });
        }
    }
    out
}

/// Names `lib.rs` re-exports at the crate root, mapped to the module they
/// come from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut text = lib;
    while let Some(at) = text.find("pub use ") {
        text = &text[at + "pub use ".len()..];
        let end = text.find(';').unwrap_or(text.len());
        let item = text[..end].split_whitespace().collect::<String>();
        if let Some((module, names)) = item.split_once("::{") {
            for name in names.trim_end_matches('}').split(',') {
                if !name.is_empty() {
                    map.insert(name.to_string(), module.to_string());
                }
            }
        } else if let Some((module, name)) = item.rsplit_once("::") {
            map.insert(name.to_string(), module.to_string());
        }
    }
    map
}

/// Every violation of the layering by the file at `module` (its path below
/// `src/` as a module path: `raw`, `interp::walk`).
fn violations(module: &str, source: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let folder = module.split("::").next().unwrap_or(module);
    let Some(own) = rank(folder) else {
        return vec![format!(
            "{module}: folder `{folder}` is not in the list of layers"
        )];
    };
    let mut found = Vec::new();
    for r in references(source, reexports) {
        let target = r.path.split("::").next().unwrap_or("");
        let to_floor = target == FLOOR;
        let bad = if folder == FLOOR {
            !r.path.starts_with(FLOOR_MAY_USE)
                && !FLOOR_MAY_READ.contains(&r.path.as_str())
                && !to_floor
        } else if module == FLOOR_MAY_USE {
            (target != "decl" || to_floor) && r.path != CONTRACT_MAY_USE
        } else if to_floor || target == folder {
            false
        } else {
            match rank(target) {
                Some(t) => t >= own,
                // Root items that are not re-exports (macros, `semantics`).
                None => false,
            }
        };
        if bad {
            found.push(format!(
                "{module}:{}: refers to `crate::{}`, which is not below layer `{folder}`",
                r.line, r.path
            ));
        }
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the source files, which Miri's isolation forbids"
)]
fn every_module_refers_only_to_its_own_layer_or_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexports = root_reexports(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut checked = 0;
    for file in &files {
        let module = module_of(&src, file);
        if module == "lib" {
            continue; // The crate root is the glue on top.
        }
        checked += 1;
        found.extend(violations(
            &module,
            &fs::read_to_string(file).unwrap(),
            &reexports,
        ));
    }
    assert!(
        checked > 10,
        "only {checked} modules found under {}",
        src.display()
    );
    assert!(found.is_empty(), "upward references:\n{}", found.join("\n"));
}

#[test]
fn an_upward_reference_is_reported() {
    let reexports = root_reexports("pub use interp::{TickReport, tick};\npub use decl::TickInput;");
    let upward = "use crate::memory::AgentMemory;\nfn f() -> crate::TickReport { todo!() }\n";
    let found = violations("tree", upward, &reexports);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("tree:1") && found[0].contains("crate::memory::AgentMemory"));
    assert!(found[1].contains("crate::interp::TickReport"));
    let downward = "use crate::decl::ItemIdx;\nuse crate::raw::DIn;\n// crate::debug\n";
    assert!(violations("tree", downward, &reexports).is_empty());
    assert!(!violations("raw", "use crate::memory::shared::Ticket;", &reexports).is_empty());
    assert!(violations("raw::tuned", "use crate::decl::tune::Tunables;", &reexports).is_empty());
    assert!(
        !violations(
            "raw::tuned",
            "use crate::decl::tune::TuneError;",
            &reexports
        )
        .is_empty()
    );
    assert!(!violations("raw::dblock", "use crate::memory::AgentMemory;", &reexports).is_empty());
    assert!(!violations("decl::behavior", "use crate::raw::DIn;", &reexports).is_empty());
    let persist = "const P: Option<crate::raw::PersistFns> = None;";
    assert!(violations("decl::behavior", persist, &reexports).is_empty());
    assert!(!violations("debug", "use crate::persist::Save;", &reexports).is_empty());
}
