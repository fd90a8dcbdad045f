//! docs/grafana/lagkit.json is a dashboard Grafana imports: valid JSON
//! with a schema version, every panel on the `${DS_PROMETHEUS}` data
//! source variable, unique panel ids, and every expression over series
//! (and labels) that docs/reference/metrics.md documents. With promtool
//! installed, each expression must also parse as PromQL.

use serde_json::Value;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn dashboard() -> Value {
    let text = std::fs::read_to_string(root().join("docs/grafana/lagkit.json")).expect("read");
    serde_json::from_str(&text).expect("docs/grafana/lagkit.json is valid JSON")
}

/// Every panel, those inside collapsed rows too.
fn panels(d: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().expect("panels") {
        out.push(p);
        if let Some(inner) = p["panels"].as_array() {
            out.extend(inner);
        }
    }
    out
}

fn exprs(d: &Value) -> Vec<String> {
    panels(d)
        .iter()
        .filter_map(|p| p["targets"].as_array())
        .flatten()
        .map(|t| {
            t["expr"]
                .as_str()
                .expect("a target without expr")
                .to_string()
        })
        .collect()
}

/// The `lagkit_*` series an expression names, each with the label names
/// of its selector.
fn selectors(expr: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("lagkit_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].to_string();
        let mut labels = Vec::new();
        let after = &tail[end..];
        if let Some(sel) = after.strip_prefix('{') {
            let sel = &sel[..sel.find('}').expect("a closed selector")];
            for m in sel.split(',') {
                let key = m
                    .split(['=', '!', '~'])
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                if !key.is_empty() {
                    labels.push(key);
                }
            }
        }
        out.push((name, labels));
        rest = &tail[end..];
    }
    out
}

#[test]
fn the_dashboard_imports_and_uses_only_documented_series() {
    let d = dashboard();
    assert!(
        d["schemaVersion"].as_u64().is_some_and(|v| v >= 30),
        "schemaVersion"
    );
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()));
    let vars = d["templating"]["list"].as_array().expect("templating");
    assert!(
        vars.iter().any(|v| v["name"] == "DS_PROMETHEUS"
            && v["type"] == "datasource"
            && v["query"] == "prometheus"),
        "a data source variable DS_PROMETHEUS"
    );
    let mut ids = std::collections::BTreeSet::new();
    for p in panels(&d) {
        let id = p["id"].as_u64().expect("panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        if p["type"] != "row" {
            assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            for t in p["targets"].as_array().expect("targets") {
                assert_eq!(t["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            }
        }
    }
    let doc = std::fs::read_to_string(root().join("docs/reference/metrics.md")).expect("read");
    let exprs = exprs(&d);
    assert!(exprs.len() >= 20, "{exprs:?}");
    let mut names = std::collections::BTreeSet::new();
    for e in &exprs {
        let sel = selectors(e);
        assert!(!sel.is_empty(), "no lagkit series in {e}");
        for (name, labels) in sel {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{name}` |")))
                .unwrap_or_else(|| panic!("{name} (in {e}) is not in docs/reference/metrics.md"));
            for l in labels {
                assert!(
                    row.contains(&format!("`{l}`")),
                    "{name} has no label {l} (in {e}): {row}"
                );
            }
            names.insert(name);
        }
    }
    // The panels the dashboard promises: rates, balance, LACP, drops.
    for must in [
        "lagkit_member_tx_bytes_total",
        "lagkit_member_lacp_actor_state",
        "lagkit_bond_engine_drops_total",
        "lagkit_switch_port_rx_bytes_total",
        "lagkit_switch_port_rx_drops_total",
        "lagkit_switch_member_state",
    ] {
        assert!(names.contains(must), "no panel uses {must}");
    }
}

#[test]
fn every_expression_parses_as_promql() {
    if std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIP: promtool not installed (Debian package prometheus, scripts/setup.sh test)"
        );
        return;
    }
    // Grafana's variables, as it would fill them in.
    let mut rules = String::from("groups:\n- name: dashboard\n  rules:\n");
    for (i, e) in exprs(&dashboard()).iter().enumerate() {
        let e = e
            .replace("$__rate_interval", "1m")
            .replace("$__range", "1h")
            .replace("$bond", ".*")
            .replace("$switch", ".*");
        rules += &format!(
            "  - record: lagkit:panel{i}\n    expr: {}\n",
            serde_json::to_string(&e).unwrap()
        );
    }
    let dir = std::env::temp_dir().join(format!("lkt-grafana-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rules.yml");
    std::fs::write(&file, rules).unwrap();
    let out = std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
