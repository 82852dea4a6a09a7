//! Where `a3ctl init` finds a default project, region and zone without running gcloud.
//!
//! The same places gcloud itself reads, in its order of precedence: the `CLOUDSDK_CORE_PROJECT`,
//! `CLOUDSDK_COMPUTE_REGION` and `CLOUDSDK_COMPUTE_ZONE` environment variables (and
//! `GOOGLE_CLOUD_PROJECT`, which client libraries read), then the active gcloud configuration:
//! `$CLOUDSDK_CONFIG` (or `~/.config/gcloud`), whose `active_config` file names
//! `configurations/config_<name>`, an INI file with `[core] project` and `[compute] region` /
//! `zone`. `CLOUDSDK_ACTIVE_CONFIG_NAME` overrides the `active_config` file as it does for gcloud.
//! Anything missing or unreadable is simply not a default; gcloud does not have to be installed.

use std::path::PathBuf;

/// Defaults found in the environment and gcloud's configuration, each with where it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub project: Option<(String, String)>,
    pub region: Option<(String, String)>,
    pub zone: Option<(String, String)>,
}

impl Found {
    pub fn project(&self) -> Option<&str> {
        self.project.as_ref().map(|(value, _)| value.as_str())
    }
    pub fn region(&self) -> Option<&str> {
        self.region.as_ref().map(|(value, _)| value.as_str())
    }
    pub fn zone(&self) -> Option<&str> {
        self.zone.as_ref().map(|(value, _)| value.as_str())
    }
}

/// Reads the defaults from the process environment.
pub fn from_env() -> Found {
    find(|name| std::env::var(name).ok())
}

/// Reads the defaults through `var`, so tests can supply the environment.
pub fn find(var: impl Fn(&str) -> Option<String>) -> Found {
    let var = |name: &str| var(name).filter(|value| !value.trim().is_empty());
    let from_var =
        |name: &str| var(name).map(|value| (value.trim().to_string(), format!("${name}")));
    let config = gcloud_config(&var);
    let from_config = |section: &str, key: &str| -> Option<(String, String)> {
        let (ini, path) = config.as_ref()?;
        let value = ini.get_from(Some(section), key)?.trim();
        (!value.is_empty()).then(|| {
            (
                value.to_string(),
                format!("{} [{section}] {key}", path.display()),
            )
        })
    };
    Found {
        project: from_var("CLOUDSDK_CORE_PROJECT")
            .or_else(|| from_var("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| from_config("core", "project")),
        region: from_var("CLOUDSDK_COMPUTE_REGION").or_else(|| from_config("compute", "region")),
        zone: from_var("CLOUDSDK_COMPUTE_ZONE").or_else(|| from_config("compute", "zone")),
    }
}

/// The active gcloud configuration file, parsed, with its path.
fn gcloud_config(var: &impl Fn(&str) -> Option<String>) -> Option<(ini::Ini, PathBuf)> {
    let dir = match var("CLOUDSDK_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(var("HOME")?).join(".config").join("gcloud"),
    };
    let name = match var("CLOUDSDK_ACTIVE_CONFIG_NAME") {
        Some(name) => name,
        None => std::fs::read_to_string(dir.join("active_config"))
            .ok()
            .map(|text| text.trim().to_string())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "default".to_string()),
    };
    // A name with a path separator would read outside the configuration directory.
    if name.contains(['/', '\\']) {
        return None;
    }
    let path = dir.join("configurations").join(format!("config_{name}"));
    let ini = ini::Ini::load_from_file(&path).ok()?;
    Some((ini, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn gcloud_dir(active: Option<&str>, configs: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("configurations")).expect("dir");
        if let Some(active) = active {
            std::fs::write(dir.path().join("active_config"), active).expect("write");
        }
        for (name, text) in configs {
            std::fs::write(
                dir.path()
                    .join("configurations")
                    .join(format!("config_{name}")),
                text,
            )
            .expect("write");
        }
        dir
    }

    #[test]
    fn environment_wins_over_the_gcloud_configuration() {
        let dir = gcloud_dir(
            Some("work\n"),
            &[(
                "work",
                "[core]\naccount = me@example.com\nproject = cfg-project\n\n[compute]\nregion = europe-west4\nzone = europe-west4-b\n",
            )],
        );
        let config = dir.path().to_str().expect("utf-8");
        let found = find(env(&[("CLOUDSDK_CONFIG", config)]));
        assert_eq!(found.project(), Some("cfg-project"));
        assert_eq!(found.region(), Some("europe-west4"));
        assert_eq!(found.zone(), Some("europe-west4-b"));
        assert!(
            found
                .project
                .as_ref()
                .is_some_and(|(_, from)| from.ends_with("config_work [core] project"))
        );

        let found = find(env(&[
            ("CLOUDSDK_CONFIG", config),
            ("CLOUDSDK_CORE_PROJECT", "env-project"),
            ("CLOUDSDK_COMPUTE_ZONE", "us-east4-a"),
        ]));
        assert_eq!(found.project(), Some("env-project"));
        assert_eq!(found.zone(), Some("us-east4-a"));
        assert_eq!(found.region(), Some("europe-west4"));
        let found = find(env(&[("GOOGLE_CLOUD_PROJECT", "lib-project")]));
        assert_eq!(found.project(), Some("lib-project"));
    }

    #[test]
    fn the_default_configuration_lives_under_home() {
        let home = tempfile::tempdir().expect("temp dir");
        let dir = home.path().join(".config/gcloud/configurations");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("config_default"),
            "[core]\nproject = home-project\n",
        )
        .expect("write");
        let found = find(env(&[("HOME", home.path().to_str().expect("utf-8"))]));
        assert_eq!(found.project(), Some("home-project"));
        assert_eq!(found.region(), None);
    }

    #[test]
    fn missing_or_odd_configuration_gives_no_defaults() {
        assert_eq!(find(env(&[])), Found::default());
        let dir = gcloud_dir(Some("../../etc"), &[]);
        let config = dir.path().to_str().expect("utf-8");
        assert_eq!(find(env(&[("CLOUDSDK_CONFIG", config)])), Found::default());
        let dir = gcloud_dir(None, &[("default", "not [an ini")]);
        let config = dir.path().to_str().expect("utf-8");
        assert_eq!(
            find(env(&[
                ("CLOUDSDK_CONFIG", config),
                ("CLOUDSDK_CORE_PROJECT", " ")
            ])),
            Found::default()
        );
    }
}
