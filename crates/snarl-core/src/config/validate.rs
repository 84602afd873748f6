//! Semantic checks that serde cannot express. Every problem is collected with its key
//! path in [`Problems`]; the error names the first and lists the others. Each section's
//! checks live beside its structs, in the module that owns it (`TopologyConfig::validate`,
//! `SwitchConfig::validate`, ...); [`Config::validate`] runs them in a fixed order, so the
//! same problems are always reported in the same order.

use super::*;
use crate::error::{closest, Error, Result};

/// Most time-series windows: each is a row per group in every output table and plot.
const MAX_WINDOWS: u64 = 10_000_000;

/// The problems found so far, each with its key path.
#[derive(Default)]
pub(crate) struct Problems(Vec<(String, String)>);

impl Problems {
    pub(crate) fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push((path.into(), message.into()));
    }
    pub(crate) fn fraction(&mut self, path: &str, value: f64, allow_zero: bool) {
        let ok = value.is_finite() && value <= 1.0 && if allow_zero { value >= 0.0 } else { value > 0.0 };
        if !ok {
            let range = if allow_zero { "[0, 1]" } else { "(0, 1]" };
            self.add(path, format!("must be a fraction in {range}, found {value}"));
        }
    }
    pub(crate) fn positive(&mut self, path: &str, value: u64) {
        if value == 0 {
            self.add(path, "must be positive, found 0");
        }
    }
    pub(crate) fn into_result(self) -> Result<()> {
        let mut iter = self.0.into_iter();
        let Some((path, mut message)) = iter.next() else { return Ok(()) };
        let rest: Vec<String> = iter.map(|(p, m)| format!("`{p}`: {m}")).collect();
        if !rest.is_empty() {
            message = format!("{message} (and {} more: {})", rest.len(), rest.join("; "));
        }
        Err(Error::Config { path, message })
    }
}

impl Config {
    /// Checks every value; the error names the first problem's key path and lists all.
    pub fn validate(&self) -> Result<()> {
        let mut p = Problems::default();
        self.validate_simulation(&mut p);
        self.topology.validate(&mut p);
        self.routing.validate(&mut p);
        self.switch.validate(self, &mut p);
        self.nic.validate(self, &mut p);
        self.traffic.validate(self, &mut p);
        self.workload.validate(self, &mut p);
        if let Some(marking) = &self.marking {
            marking.validate(self, &mut p);
        }
        self.congestion_control.validate(self, &mut p);
        crate::isolation::validate_isolation(self, &mut p);
        self.observe.validate(self, &mut p);
        p.into_result()
    }

    fn validate_simulation(&self, p: &mut Problems) {
        let s = &self.simulation;
        p.positive("simulation.duration", s.duration.0);
        if s.warmup >= s.duration && s.duration.0 > 0 {
            p.add("simulation.warmup", format!("must be shorter than the duration ({})", s.duration));
        }
        if let Some(w) = s.window {
            p.positive("simulation.window", w.0);
            if w > s.duration {
                p.add("simulation.window", format!("must not exceed the duration ({})", s.duration));
            }
            if w.0 > 0 && s.duration.0 / w.0 > MAX_WINDOWS {
                let least = crate::units::Time(s.duration.0.div_ceil(MAX_WINDOWS));
                p.add(
                    "simulation.window",
                    format!("asks for more than {MAX_WINDOWS} time-series windows; use at least {least}, found {w}"),
                );
            }
        }
        if let Some(watchdog) = s.watchdog {
            p.positive("simulation.watchdog", watchdog.0);
        }
        if let Some(stop) = &s.stop_after {
            let names: Vec<&str> = self.traffic.groups.iter().map(|g| g.name.as_str()).collect();
            if names.is_empty() {
                p.add(
                    "simulation.stop_after.group",
                    format!("the run has no `[[traffic.groups]]` whose messages could end it, found `{}`", stop.group),
                );
            } else if !names.contains(&stop.group.as_str()) {
                let hint = closest(&stop.group, names.iter().copied())
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                p.add(
                    "simulation.stop_after.group",
                    format!(
                        "unknown group `{}`{hint} (a group of `[[traffic.groups]]`: {})",
                        stop.group,
                        names.join(", ")
                    ),
                );
            }
            p.positive("simulation.stop_after.messages", stop.messages);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;

    const BASE: &str = r#"
        [simulation]
        duration = "10us"
        [topology]
        type = "single_switch"
        hosts = 4
        [traffic]
        load = 0.5
    "#;

    fn problem(overrides: &[(&str, &str)]) -> String {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        load_config(BASE, &o, None).unwrap_err().to_string()
    }

    #[test]
    fn dcqcn_needs_round_robin_nics() {
        let e = problem(&[("congestion_control.type", "dcqcn"), ("nic.scheduling", "fifo")]);
        assert!(e.contains("`nic.scheduling`") && e.contains("round_robin"), "{e}");
        let e = problem(&[("nic.scheduling", "round_robbin")]);
        assert!(e.contains("did you mean `round_robin`"), "{e}");
        let o = [("congestion_control.type".to_string(), "dcqcn".to_string())];
        assert!(load_config(BASE, &o, None).is_ok(), "left out, scheduling follows the congestion control");
    }

    fn mix(parts: &str) -> String {
        format!("{{ type = \"mix\", parts = [{parts}] }}")
    }

    #[test]
    fn mix_shares_take_the_rest_and_must_sum_to_one() {
        let load = |pattern: &str| load_config(BASE, &[("traffic.pattern".into(), pattern.into())], None);
        let p = load(&mix("{ share = 0.3, pattern = { type = \"uniform\" } }, { pattern = { type = \"silent\" } }"))
            .unwrap()
            .traffic
            .pattern
            .clone();
        let shares: Vec<f64> = p.parts().iter().map(|(share, _)| *share).collect();
        assert!((shares[0] - 0.3).abs() < 1e-12 && (shares[1] - 0.7).abs() < 1e-12, "{shares:?}");
        assert_eq!(p.streams(), 2);
        // Written out, 0.1 + 0.2 + 0.7 is 1 within rounding.
        let three =
            "{ share = 0.1, pattern = { type = \"uniform\" } }, { share = 0.2, pattern = { type = \"uniform\" } }, \
                     { share = 0.7, pattern = { type = \"uniform\" } }";
        assert!(load(&mix(three)).is_ok());
        // A share of 0 and a rest of 0 are allowed (p = 0 and p = 1 in a sweep).
        assert!(load(&mix("{ share = 0.0, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .is_ok());
        assert!(load(&mix("{ share = 1.0, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .is_ok());
        let e = load(&mix(
            "{ share = 0.6, pattern = { type = \"uniform\" } }, { share = 0.6, pattern = { type = \"uniform\" } }",
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("`traffic.pattern.parts`") && e.contains("sum to 1"), "{e}");
        let e = load(&mix("{ share = 0.6, pattern = { type = \"uniform\" } }, { share = 0.6, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`traffic.pattern.parts.2.share`") && e.contains("more than 1"), "{e}");
        let e = load(&mix("{ share = 1.2, pattern = { type = \"uniform\" } }")).unwrap_err().to_string();
        assert!(e.contains("`traffic.pattern.parts.0.share`") && e.contains("[0, 1]"), "{e}");
        let e = load(&mix("")).unwrap_err().to_string();
        assert!(e.contains("`traffic.pattern.parts`") && e.contains("1 to 16 parts"), "{e}");
    }

    #[test]
    fn negative_load_is_refused() {
        let e = problem(&[("traffic.load", "-0.2")]);
        assert!(e.contains("`traffic.load`") && e.contains("[0, 1]"), "{e}");
    }

    #[test]
    fn every_problem_is_listed() {
        let e = problem(&[("traffic.load", "2"), ("switch.speedup", "0")]);
        assert!(e.contains("traffic.load") || e.contains("switch.speedup"), "{e}");
        assert!(e.contains("1 more"), "{e}");
    }

    #[test]
    fn unknown_phase_group_suggests_name() {
        let text = format!(
            "{BASE}\n[[traffic.groups]]\nname = \"hot\"\ncount = 1\n[[traffic.phases]]\nat = \"1us\"\ngroup = \"hto\"\nload = 1.0\n"
        );
        let e = load_config(&text, &[], None).unwrap_err().to_string();
        assert!(e.contains("did you mean `hot`"), "{e}");
    }

    #[test]
    fn direct_topologies_are_checked() {
        let fabric = |lines: &str| {
            let text = BASE.replace("type = \"single_switch\"\n        hosts = 4", lines);
            load_config(&text, &[], None).map(|c| c.into_inner().topology.shape)
        };
        let problem = |lines: &str| fabric(lines).unwrap_err().to_string();
        let df = "type = \"dragonfly\"\nhosts_per_switch = 4\nswitches_per_group = 8\nglobal_links_per_switch = 4";
        assert_eq!(
            fabric(df).unwrap(),
            TopologyConfig::Dragonfly {
                hosts_per_switch: 4,
                switches_per_group: 8,
                global_links_per_switch: 4,
                groups: None,
                arrangement: Arrangement::Palmtree,
            }
        );
        let e = problem(&format!("{df}\ngroups = 34"));
        assert!(e.contains("`topology.groups`") && e.contains("at most") && e.contains("= 33"), "{e}");
        assert!(problem(&format!("{df}\ngroups = 1")).contains("at least 2"));
        let e = problem(&format!("{df}\narrangement = \"palm_tree\""));
        assert!(e.contains("did you mean `palmtree`"), "{e}");
        let e = problem("type = \"dragonfly\"\nhosts_per_switch = 1\nswitches_per_group = 3\nglobal_links_per_switch = 1\ngroups = 3");
        assert!(e.contains("must be even"), "{e}");
        let mf = "type = \"megafly\"\nleaves_per_group = 6\nspines_per_group = 6\nhosts_per_leaf = 6\nglobal_links_per_spine = 0";
        assert!(problem(mf).contains("`topology.global_links_per_spine`"));
        let e = problem(&format!("{}\ngroups = 40", mf.replace("spine = 0", "spine = 6")));
        assert!(e.contains("`topology.groups`") && e.contains("= 37"), "{e}");
        let e = problem("type = \"hyperx\"\nsides = [6, 1, 6]\nhosts_per_switch = 6");
        assert!(e.contains("`topology.sides.1`") && e.contains("at least 2"), "{e}");
        assert!(problem("type = \"torus\"\nsides = [2, 2, 2, 2, 2, 2, 2]\nhosts_per_switch = 1").contains("1 to 6"));
        assert!(problem("type = \"mesh\"\nsides = []\nhosts_per_switch = 1").contains("`topology.sides`"));
        assert!(problem("type = \"mesh\"\nsides = [4]\nhosts_per_switch = 0").contains("`topology.hosts_per_switch`"));
        assert!(problem("type = \"hyperx\"\nsides = [4]\nhosts_per_switch = 1\nlinks_per_pair = 0")
            .contains("`topology.links_per_pair`"));
        assert_eq!(
            fabric("type = \"hyperx\"\nsides = [6, 6, 6]\nhosts_per_switch = 6").unwrap(),
            TopologyConfig::HyperX { sides: vec![6, 6, 6], hosts_per_switch: 6, links_per_pair: 1 }
        );
    }

    #[test]
    fn a_shared_pool_under_pfc_is_refused_as_having_no_effect() {
        let pool = [("switch.type", "shared_buffer"), ("switch.shared_pool", "\"1MiB\"")];
        let pfc = [("flow_control.type", "pfc"), ("flow_control.xoff", "8"), ("flow_control.xon", "4")];
        let e = problem(&[&pool[..], &pfc[..]].concat());
        assert!(e.contains("`switch.shared_pool`") && e.contains("no effect under PFC"), "{e}");
        let o: Vec<(String, String)> = [&pool[..], &[("flow_control.type", "none")]]
            .concat()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(load_config(BASE, &o, None).is_ok(), "tail drop borrows from the pool");
    }

    #[test]
    fn congestion_control_values_are_checked() {
        let e = problem(&[("marking.kmin", "\"300KB\""), ("marking.kmax", "\"200KB\"")]);
        assert!(e.contains("`marking.kmin`") && e.contains("must not exceed marking.kmax"), "{e}");
        assert!(problem(&[("marking.pmax", "0")]).contains("`marking.pmax`"));
        assert!(problem(&[("marking.pmax", "1.5")]).contains("(0, 1]"));
        assert!(problem(&[("marking.type", "redd")]).contains("did you mean `red`"));
        // The older [ecn] section: errors name it as written.
        let e = problem(&[("ecn.kmin", "\"300KB\""), ("ecn.kmax", "\"200KB\"")]);
        assert!(e.contains("`ecn.kmin`") && e.contains("must not exceed ecn.kmax"), "{e}");
        let e = problem(&[("ecn.kmn", "\"3KB\"")]);
        assert!(e.contains("`ecn.kmn`") && e.contains("kmin"), "{e}");
        let e = problem(&[("ecn.kmin", "\"3KB\""), ("marking.kmin", "\"3KB\"")]);
        assert!(e.contains("`ecn`") && e.contains("only one"), "{e}");
        let dcqcn = |key: &str, value: &str| problem(&[("congestion_control.type", "dcqcn"), (key, value)]);
        assert!(dcqcn("congestion_control.g", "0").contains("`congestion_control.g`"));
        assert!(dcqcn("congestion_control.rate_timer", "\"0us\"").contains("`congestion_control.rate_timer`"));
        assert!(dcqcn("congestion_control.alpha_timer", "\"0us\"").contains("`congestion_control.alpha_timer`"));
        assert!(dcqcn("congestion_control.byte_counter", "0").contains("`congestion_control.byte_counter`"));
        let e = dcqcn("congestion_control.min_rate", "\"400Gbps\"");
        assert!(e.contains("`congestion_control.min_rate`") && e.contains("host link rate"), "{e}");
        let e = dcqcn("congestion_control.rate_ia", "\"40Mbps\"");
        assert!(e.contains("congestion_control.rate_ia") && e.contains("did you mean `rate_ai`"), "{e}");
        let e = problem(&[("congestion_control.type", "dcqnc")]);
        assert!(e.contains("did you mean `dcqcn`"), "{e}");
    }

    #[test]
    fn dcqcn_implies_the_paper_marking() {
        let o = vec![("congestion_control.type".to_string(), "dcqcn".to_string())];
        let c = load_config(BASE, &o, None).unwrap();
        assert_eq!(c.marking, Some(MarkingConfig::Red(RedConfig::default())));
        assert!(c.to_toml().contains("[marking]\ntype = \"red\""), "{}", c.to_toml());
        assert_eq!(load_config(BASE, &[], None).unwrap().marking, None);
    }

    #[test]
    fn the_ecn_section_is_red_marking() {
        let red = [("kmin", "\"4KiB\""), ("kmax", "\"64KiB\""), ("pmax", "0.2"), ("mark", "\"dequeue\"")];
        let under = |section: &str| -> Vec<(String, String)> {
            red.iter().map(|(k, v)| (format!("{section}.{k}"), v.to_string())).collect()
        };
        let ecn = load_config(BASE, &under("ecn"), None).unwrap();
        let marking = load_config(BASE, &under("marking"), None).unwrap();
        assert_eq!(ecn.to_toml(), marking.to_toml());
        let Some(MarkingConfig::Red(r)) = ecn.marking.clone() else { panic!("{:?}", ecn.marking) };
        assert_eq!((r.kmin.0, r.kmax.0, r.pmax, r.mark), (4096, 65536, 0.2, EcnMarkAt::Dequeue));
    }

    #[test]
    fn size_distributions_are_checked() {
        let (path, message) = match load_config(BASE, &[("traffic.size_distribution".into(), "web_serch".into())], None)
        {
            Err(Error::Config { path, message }) => (path, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(path, "traffic.size_distribution");
        assert!(message.contains("did you mean `web_search`"), "{message}");
        let both = format!("{BASE}\n[[traffic.groups]]\nname = \"a\"\ncount = 1\nmessage_size = \"1KiB\"\nsize_distribution = \"hadoop\"\n");
        let e = load_config(&both, &[], None).unwrap_err().to_string();
        assert!(e.contains("`traffic.groups.0.size_distribution`") && e.contains("not both"), "{e}");
        let ok = load_config(BASE, &[("traffic.size_distribution".into(), "google_all".into())], None).unwrap();
        assert_eq!(ok.traffic.size_distribution.as_deref(), Some("google_all"));
    }

    #[test]
    fn voq_and_receive_caps_stay_out_of_resolved_configs_unless_set() {
        // Resolved configs (and so sweep point ids) of runs without them do not change.
        let plain = load_config(BASE, &[], None).unwrap().to_toml();
        assert!(!plain.contains("input_queuing") && !plain.contains("receive_cap"), "{plain}");
        let o: Vec<(String, String)> = [("switch.input_queuing", "voq"), ("nic.receive_cap", "13.6Gbps")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let set = load_config(BASE, &o, None).unwrap();
        let text = set.to_toml();
        assert!(text.contains("input_queuing = \"voq\"") && text.contains("receive_cap = \"13600Mbps\""), "{text}");
        assert_eq!(load_config(&text, &[], None).unwrap().to_toml(), text, "the resolved config reads back as itself");
        let fifo = [("switch.input_queuing".to_string(), "fifo".to_string())];
        assert_eq!(load_config(BASE, &fifo, None).unwrap().to_toml(), plain, "fifo is the default, left out");
    }
}
