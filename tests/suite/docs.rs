//! The lists in the docs list what exists: the guide's chapters, the
//! runnable examples and the workspace's crates, and the docs' links to
//! files lead to files. Each test gathers every problem it finds and fails
//! once, naming what is missing where.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root (the root package's manifest directory).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file of the repository, by its path from the root.
fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The file names in a directory of the repository, sorted.
fn entries(dir: &str) -> Vec<String> {
    let Ok(read) = fs::read_dir(root().join(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Fails with every problem found, one a line.
#[track_caller]
fn report(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s)\n  - {}",
        problems.len(),
        problems.join("\n  - ")
    );
}

/// The guide's chapters: `chNN_name` for each `bt-core/docs/guide/chNN_name.md`.
fn chapters() -> Vec<String> {
    let chapters: Vec<String> = entries("bt-core/docs/guide")
        .into_iter()
        .filter_map(|name| name.strip_suffix(".md").map(str::to_owned))
        .filter(|stem| chapter_at(stem, 0).is_some_and(|c| c.len() == stem.len()))
        .collect();
    assert!(
        !chapters.is_empty(),
        "no chNN_*.md file in bt-core/docs/guide"
    );
    chapters
}

/// The chapter name (`ch09_performance`) that starts at byte `at`, if one does.
fn chapter_at(text: &str, at: usize) -> Option<&str> {
    let rest = &text[at..];
    let b = rest.as_bytes();
    let word_before = text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    if word_before
        || b.len() < 6
        || !rest.starts_with("ch")
        || !b[2].is_ascii_digit()
        || !b[3].is_ascii_digit()
        || b[4] != b'_'
    {
        return None;
    }
    let len = rest
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(rest.len());
    (len > 5).then(|| &rest[..len])
}

/// Every chapter name a text mentions.
fn chapters_named(text: &str) -> BTreeSet<String> {
    text.match_indices("ch")
        .filter_map(|(at, _)| chapter_at(text, at))
        .map(str::to_owned)
        .collect()
}

/// The source file under `bt-core/src` that declares `pub mod guide`.
fn guide_module() -> String {
    let mut files = vec![PathBuf::from("bt-core/src")];
    while let Some(path) = files.pop() {
        let full = root().join(&path);
        if full.is_dir() {
            for name in fs::read_dir(&full).unwrap() {
                files.push(path.join(name.unwrap().file_name()));
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && fs::read_to_string(&full).unwrap().contains("pub mod guide")
        {
            return path.to_string_lossy().into_owned();
        }
    }
    panic!("no file under bt-core/src declares `pub mod guide`");
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn docs_list_every_guide_chapter() {
    let chapters = chapters();
    let module = guide_module();
    // Where each chapter must appear, and in what form.
    type Form = fn(&str) -> String;
    let places: [(&str, &str, Form); 6] = [
        (&module, "the guide module's include_str!", |c| {
            format!("\"../docs/guide/{c}.md\"")
        }),
        (&module, "the guide module's submodules", |c| {
            format!("pub mod {c} {{}}")
        }),
        (&module, "the crate docs' list of chapters", |c| {
            format!("(guide::{c})")
        }),
        ("bt-core/docs/guide/index.md", "the guide's contents", |c| {
            format!("(crate::guide::{c})")
        }),
        ("README.md", "a link to the chapter's file", |c| {
            format!("(bt-core/docs/guide/{c}.md)")
        }),
        ("bt-core/README.md", "the chapter's name", |c| c.to_owned()),
    ];
    let mut problems = Vec::new();
    for (path, what, form) in places {
        let text = read(path);
        for chapter in &chapters {
            if !text.contains(&form(chapter)) {
                problems.push(format!(
                    "{path} lacks guide chapter {chapter} ({what}: `{}`)",
                    form(chapter)
                ));
            }
        }
        for named in chapters_named(&text) {
            if !chapters.contains(&named) {
                problems.push(format!(
                    "{path} names guide chapter {named}, but bt-core/docs/guide/{named}.md does not exist"
                ));
            }
        }
    }
    report("guide chapters", &problems);
}

/// A package of the workspace: its name and directory (`.` for the root).
struct Package {
    name: String,
    dir: String,
}

/// The workspace's members, from `members = [...]` in the root manifest
/// (on one line or several).
fn members() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let list = manifest
        .find("\nmembers")
        .map(|at| &manifest[at..])
        .and_then(|rest| rest.get(rest.find('[')? + 1..rest.find(']')?))
        .expect("the root Cargo.toml has no `members = [...]`");
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The root package and every member, each with its name from its manifest.
fn packages() -> Vec<Package> {
    let dirs = std::iter::once(".".to_owned()).chain(members());
    dirs.map(|dir| {
        let manifest = read(&format!("{dir}/Cargo.toml"));
        let package = &manifest[manifest.find("[package]").expect("a [package] section")..];
        let name = value(package, "name").expect("a package name");
        Package { name, dir }
    })
    .collect()
}

/// The string value of `key = "…"` in the first line of `section` that sets it.
fn value(section: &str, key: &str) -> Option<String> {
    section.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// A runnable example: its package, name, and the features it requires.
struct Example {
    package: String,
    root: bool,
    name: String,
    features: Vec<String>,
}

/// Every example of every package: `examples/*.rs`, `examples/*/main.rs`
/// and the `[[example]]` entries of its manifest.
fn examples() -> Vec<Example> {
    let mut all = Vec::new();
    for package in packages() {
        let dir = format!("{}/examples", package.dir);
        let mut names = BTreeSet::new();
        for entry in entries(&dir) {
            if let Some(stem) = entry.strip_suffix(".rs") {
                names.insert(stem.to_owned());
            } else if root().join(&dir).join(&entry).join("main.rs").is_file() {
                names.insert(entry);
            }
        }
        let manifest = read(&format!("{}/Cargo.toml", package.dir));
        let mut required = Vec::new();
        for block in manifest.split("[[example]]").skip(1) {
            let block = block.split("\n[").next().unwrap();
            let name = value(block, "name").expect("an [[example]] without a name");
            let features: Vec<String> = value(block, "required-features")
                .map(|v| {
                    v.trim_matches(|c| c == '[' || c == ']')
                        .split(',')
                        .map(|f| f.trim().trim_matches('"').to_owned())
                        .filter(|f| !f.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            required.push((name.clone(), features));
            names.insert(name);
        }
        for name in names {
            let features = required
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, f)| f.clone())
                .unwrap_or_default();
            all.push(Example {
                package: package.name.clone(),
                root: package.dir == ".",
                name,
                features,
            });
        }
    }
    all
}

/// A row of a table in `examples/README.md`: the example, its link, its command.
struct Row {
    name: String,
    link: String,
    command: String,
}

/// The rows of `examples/README.md`'s tables: `| [`name`](link) | `command` | … |`.
fn example_rows() -> Vec<Row> {
    read("examples/README.md")
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.strip_prefix('|')?.split('|').map(str::trim).collect();
            let first = cells.first()?.strip_prefix("[`")?;
            let (name, rest) = first.split_once("`](")?;
            let link = rest.strip_suffix(')')?;
            let command = cells.get(1)?.trim_matches('`');
            Some(Row {
                name: name.to_owned(),
                link: link.to_owned(),
                command: command.to_owned(),
            })
        })
        .collect()
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn examples_readme_lists_every_example() {
    let examples = examples();
    let rows = example_rows();
    let mut problems = Vec::new();
    for example in &examples {
        let (package, name) = (&example.package, &example.name);
        let Some(row) = rows.iter().find(|r| r.name == *name) else {
            problems.push(format!(
                "examples/README.md has no row for example `{name}` of {package}"
            ));
            continue;
        };
        let words: Vec<&str> = row.command.split_whitespace().collect();
        let has = |a: &str, b: &str| words.windows(2).any(|w| w == [a, b]);
        if !row.command.starts_with("cargo run") || !has("--example", name) {
            problems.push(format!(
                "examples/README.md's command for `{name}` is not `cargo run … --example {name}`: `{}`",
                row.command
            ));
        }
        if example.root && words.contains(&"-p") {
            problems.push(format!(
                "examples/README.md's command for `{name}` names a package, but the example is the root package's: `{}`",
                row.command
            ));
        }
        if !example.root && !has("-p", package) {
            problems.push(format!(
                "examples/README.md's command for `{name}` lacks `-p {package}`: `{}`",
                row.command
            ));
        }
        for feature in &example.features {
            if !has("--features", feature) {
                problems.push(format!(
                    "examples/README.md's command for `{name}` lacks `--features {feature}`, which {package} requires for it: `{}`",
                    row.command
                ));
            }
        }
    }
    for row in &rows {
        if !examples.iter().any(|e| e.name == row.name) {
            problems.push(format!(
                "examples/README.md lists example `{}`, which no package of the workspace has",
                row.name
            ));
        }
        if !root().join("examples").join(&row.link).is_file() {
            problems.push(format!(
                "examples/README.md links example `{}` to {}, which is not a file",
                row.name, row.link
            ));
        }
    }
    report("examples", &problems);
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn docs_run_only_examples_that_exist() {
    let examples = examples();
    let mut docs: Vec<String> = [
        "README.md",
        "bt-core/README.md",
        "bt-bench/README.md",
        "ARCHITECTURE.md",
    ]
    .map(str::to_owned)
    .to_vec();
    for chapter in entries("bt-core/docs/guide") {
        docs.push(format!("bt-core/docs/guide/{chapter}"));
    }
    let mut problems = Vec::new();
    if !read("README.md").contains("(examples/README.md)") {
        problems.push("README.md does not link examples/README.md, the list of examples".into());
    }
    for doc in &docs {
        let text = read(doc);
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] != "--example" {
                continue;
            }
            let name = pair[1].trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
            if !examples.iter().any(|e| e.name == name) {
                problems.push(format!(
                    "{doc} runs `--example {name}`, which no package of the workspace has"
                ));
            }
        }
    }
    report("examples named in the docs", &problems);
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn readme_names_every_crate_of_the_workspace() {
    const HEADING: &str = "## The crates";
    let readme = read("README.md");
    let Some(start) = readme.find(&format!("\n{HEADING}\n")) else {
        panic!("README.md has no `{HEADING}` section, where the workspace's crates are listed");
    };
    let section = &readme[start + HEADING.len() + 2..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    // The bullets: "- [`name`](dir/) — what it is for".
    let listed: Vec<(&str, &str)> = section
        .lines()
        .filter_map(|l| l.strip_prefix("- [`")?.split_once("`]("))
        .map(|(name, rest)| (name, rest.split(')').next().unwrap()))
        .collect();
    let packages = packages();
    let mut problems = Vec::new();
    for package in &packages {
        if !listed.iter().any(|(name, _)| *name == package.name) {
            problems.push(format!(
                "README.md's `{HEADING}` does not name {} ({}/), a package of the workspace",
                package.name, package.dir
            ));
        }
    }
    for (name, link) in &listed {
        match packages.iter().find(|p| p.name == *name) {
            None => problems.push(format!(
                "README.md's `{HEADING}` names {name}, which is no package of the workspace"
            )),
            Some(p) if Path::new(link.trim_end_matches('/')) != Path::new(&p.dir) => {
                problems.push(format!(
                    "README.md's `{HEADING}` links {name} to {link}, not to its directory {}/",
                    p.dir
                ))
            }
            Some(_) => {}
        }
    }
    report("the README's crate list", &problems);
}

/// The first fenced block in a text whose fence is exactly ```` ```rust ````.
fn first_rust_block(text: &str) -> Option<&str> {
    let start = text.find("\n```rust\n")? + "\n```rust\n".len();
    Some(&text[start..start + text[start..].find("\n```")?])
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn bt_core_readme_shows_the_example_that_runs() {
    // README.md's example runs as a doctest (bt-core includes the file);
    // bt-core/README.md, the crate's page on crates.io, is not compiled.
    let (readme, crate_page) = (read("README.md"), read("bt-core/README.md"));
    let tested = first_rust_block(&readme).expect("README.md has no ```rust example");
    let shown = first_rust_block(&crate_page).expect("bt-core/README.md has no ```rust example");
    assert!(
        tested == shown,
        "bt-core/README.md's example is not README.md's, the one that runs as a doctest:\n\
         --- README.md\n{tested}\n--- bt-core/README.md\n{shown}"
    );
}

#[test]
#[cfg_attr(miri, ignore)] // reads the repository's files, which Miri's isolation forbids
fn front_docs_link_to_files_that_exist() {
    let docs = [
        "README.md",
        "bt-core/README.md",
        "bt-bench/README.md",
        "examples/README.md",
    ];
    let mut problems = Vec::new();
    for doc in docs {
        let text = read(doc);
        let dir = Path::new(doc).parent().unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !root().join(dir).join(target).exists() {
                problems.push(format!("{doc} links to {target}, which does not exist"));
            }
        }
    }
    report("links", &problems);
}
