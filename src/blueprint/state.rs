//! State backend rules: a local file under `state/` by default, or a GCS bucket with a prefix
//! and an optional Cloud KMS key. How state is written and locked lives in the state module.

use std::path::PathBuf;

use super::decode::Sp;
use super::error::{Finding, Findings};
use super::model::StateBackend;
use super::names;
use super::schema::RawState;
use super::validate::{Ctx, choice, name_ok};

pub(crate) fn state(raw: &RawState, ctx: &mut Ctx) -> Option<StateBackend> {
    let f = &mut ctx.f;
    let backend = match &raw.backend {
        None => Some("local"),
        Some(value) => choice(f, value, "backend", &["local", "gcs"], |text| match text {
            "local" => Some("local"),
            "gcs" => Some("gcs"),
            _ => None,
        }),
    }?;
    let misplaced = |f: &mut Findings, key: &str, value: &Option<Sp<String>>, other: &str| {
        if let Some(value) = value {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!("`{key}` does not apply to the `{backend}` state backend"),
                    "not used by this backend",
                )
                .help(format!("remove it, or set `backend = \"{other}\"`")),
            );
        }
    };
    match backend {
        "local" => {
            let before = f.0.len();
            misplaced(f, "bucket", &raw.bucket, "gcs");
            misplaced(f, "prefix", &raw.prefix, "gcs");
            misplaced(f, "kms_key", &raw.kms_key, "gcs");
            if f.0.len() != before {
                return None;
            }
            let path = match &raw.path {
                Some(path) if path.value.trim().is_empty() => {
                    f.push(Finding::new(
                        path.span.clone(),
                        "State `path` is empty",
                        "empty path",
                    ));
                    return None;
                }
                Some(path) => PathBuf::from(&path.value),
                None => PathBuf::from(format!("state/{}.a3state.json", ctx.name.as_deref()?)),
            };
            Some(StateBackend::Local { path })
        }
        _ => {
            let before = f.0.len();
            misplaced(f, "path", &raw.path, "local");
            let bucket = match &raw.bucket {
                None => {
                    let span = raw
                        .backend
                        .as_ref()
                        .map_or(raw.anchor.clone(), |b| b.span.clone());
                    f.push(
                        Finding::new(
                            span,
                            "The `gcs` state backend needs a `bucket`",
                            "`bucket` is missing",
                        )
                        .help("add `bucket = \"my-project-a3ctl-state\"` to [state]"),
                    );
                    None
                }
                Some(bucket) => {
                    let help = "bucket names have 3 to 63 lowercase letters, digits, hyphens and underscores";
                    name_ok(
                        f,
                        bucket,
                        "State bucket",
                        names::bucket(bucket.as_str()),
                        help,
                    )
                    .then(|| bucket.value.clone())
                }
            };
            let kms_key = raw.kms_key.as_ref().map(|key| {
                let parts: Vec<&str> = key.as_str().split('/').collect();
                let valid = parts.len() == 8
                    && parts[0] == "projects"
                    && parts[2] == "locations"
                    && parts[4] == "keyRings"
                    && parts[6] == "cryptoKeys"
                    && parts.iter().all(|p| !p.is_empty());
                if !valid {
                    f.push(
                        Finding::new(key.span.clone(), "`kms_key` is not a Cloud KMS key name", "not a key name")
                            .help("use projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>"),
                    );
                }
                valid.then(|| key.value.clone())
            });
            if f.0.len() != before {
                return None;
            }
            let prefix = match &raw.prefix {
                Some(prefix) => prefix.value.trim_matches('/').to_string(),
                None => format!("a3ctl/{}", ctx.name.as_deref()?),
            };
            Some(StateBackend::Gcs {
                bucket: bucket?,
                prefix,
                kms_key: kms_key.flatten(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem};
    use crate::blueprint::{StateBackend, parse};

    fn section(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[{table}]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn state_backend_keys_match_the_backend() {
        let problem = one_problem(
            &section("state", "backend = \"gcs\""),
            "The `gcs` state backend needs a `bucket`",
            7,
            11,
        );
        assert_eq!(problem.label, "`bucket` is missing");
        one_problem(
            &section("state", "bucket = \"my-project-state\""),
            "`bucket` does not apply to the `local` state backend",
            7,
            10,
        );
        one_problem(
            &section(
                "state",
                "backend = \"gcs\"\nbucket = \"my-project-state\"\npath = \"x.json\"",
            ),
            "`path` does not apply",
            9,
            8,
        );
        one_problem(
            &section(
                "state",
                "backend = \"gcs\"\nbucket = \"my-project-state\"\nkms_key = \"key\"",
            ),
            "`kms_key` is not a Cloud KMS key name",
            9,
            11,
        );
        let gcs = parse(
            &section("state", "backend = \"gcs\"\nbucket = \"my-project-state\""),
            "t",
        )
        .expect("valid");
        assert_eq!(
            gcs.state,
            StateBackend::Gcs {
                bucket: "my-project-state".into(),
                prefix: "a3ctl/a3mega".into(),
                kms_key: None
            }
        );
        one_problem(
            &section("state", "backend = \"s3\""),
            "`backend` must be `local` or `gcs`",
            7,
            11,
        );
    }
}
