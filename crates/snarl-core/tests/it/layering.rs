//! The layering holds: the kernel imports no model and no part of the assembly, and no
//! model imports the assembly. Checked by reading the sources, so a stray `use` fails
//! here rather than growing a circle unnoticed.

use std::path::{Path, PathBuf};

/// Modules the kernel must not import: the models, the observers, and what composes them.
const NOT_IN_KERNEL: &[&str] =
    &["switch", "nic", "cc", "routing", "traffic", "observe", "topology", "config", "sim", "model", "report"];

/// Modules that hold models: they may use the kernel, never the assembly above them.
const MODELS: &[&str] =
    &["switch", "nic", "cc", "routing", "traffic", "observe", "topology", "flow_control", "isolation", "install"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The sources of the top-level module `name`: its folder, or its one file.
fn module_sources(name: &str) -> Vec<PathBuf> {
    let folder = src().join(name);
    if folder.is_dir() {
        return sources(&folder);
    }
    let file = src().join(format!("{name}.rs"));
    assert!(file.is_file(), "no module `{name}` in {}", src().display());
    vec![file]
}

/// The code of `file` before its unit tests (`#[cfg(test)]`), which may build whole runs;
/// nothing for a file of unit tests (`tests.rs`).
fn code(file: &Path) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The top-level modules of the crate that `code` names as `crate::<module>` (in a `use`
/// or a path), with the line each first appears on.
fn crate_modules(code: &str) -> Vec<(String, usize)> {
    let mut found: Vec<(String, usize)> = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a, b::C}`: each item's first segment.
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() {
                        found.push((name, n + 1));
                    }
                }
                continue;
            }
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((name, n + 1));
        }
    }
    found
}

fn violations(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for file in files {
        for (module, line) in crate_modules(&code(file)) {
            if forbidden.contains(&module.as_str()) {
                bad.push(format!("{}:{line} uses crate::{module}", file.strip_prefix(src()).unwrap().display()));
            }
        }
    }
    bad
}

#[test]
fn the_kernel_imports_no_model() {
    let files = sources(&src().join("kernel"));
    assert!(files.len() >= 5, "found only {} kernel sources", files.len());
    let bad = violations(&files, NOT_IN_KERNEL);
    assert!(bad.is_empty(), "the kernel must not import a model or the assembly:\n{}", bad.join("\n"));
    // Nor reach them relatively.
    for file in &files {
        assert!(!code(file).contains("super::super"), "{}: reaches past the kernel", file.display());
    }
}

#[test]
fn no_model_imports_the_assembly() {
    let files: Vec<PathBuf> = MODELS.iter().flat_map(|m| module_sources(m)).collect();
    assert!(files.len() >= 30, "found only {} model sources", files.len());
    let bad = violations(&files, &["sim"]);
    assert!(bad.is_empty(), "a model must not import the assembly layer:\n{}", bad.join("\n"));
}

#[test]
fn the_scan_sees_grouped_and_plain_imports() {
    let found =
        crate_modules("use crate::{nic::Nics, packet::NIL};\nlet x = crate::observe::Stats::new(); // crate::sim\n");
    let names: Vec<&str> = found.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["nic", "packet", "observe"]);
    let bad = violations(&[src().join("sim/mod.rs")], &["kernel"]);
    assert!(!bad.is_empty(), "the assembly uses the kernel: the scan must see it");
}
