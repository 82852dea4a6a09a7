//! A project number wherever a request names a project: `projects/123456789012/...` in the path of
//! every Google API the simulator serves, and Cloud Storage's `project` parameter, names the same
//! project as its id, and the request is answered with the same resources.
//!
//! Sources: Google APIs "should accept both project IDs and project numbers for incoming API
//! requests" (AIP-2510, <https://google.aip.dev/cloud/2510>). The discovery documents say it per
//! API: GKE's `projectId` is "The Google Developers Console project ID or project number"
//! (container v1, `https://container.googleapis.com/$discovery/rest?version=v1`); Compute's
//! `project` path parameter is "Project ID for this request." with a pattern that admits
//! `[0-9]{1,19}` (compute v1); Filestore's resource names read `projects/{project_id}` in some
//! methods and `projects/{project_number}` in others (`instances.restore`, `backups.create`,
//! file v1); Resource Manager resolves either (`GET v3/projects/415104041262`,
//! googleapis/googleapis@google/cloud/resourcemanager/v3/projects.proto); Cloud Storage's
//! `project` parameter is "A valid API project identifier" (storage v1).
//!
//! How: before routing, the front door ([`crate::server`]) replaces a number in the path (and in
//! Storage's `project` parameter) with the id of the project it belongs to — configured in the
//! world file's `[[projects]]`, or a project the simulator has seen (its stable number,
//! [`crate::iam::project_key`]). A number no known project has is left as it is (a project of its
//! own, as any id is). The request log keeps the path as sent. Answers keep each API's own form of
//! links (GKE's operation links carry the number, Compute's links the id: they are built from the
//! project, not from the path). An error, though, "must return the originally-provided value
//! without modification" (AIP-2510): an error body names the project as the request did.
// GUESS(project-number-compute-errors): Compute's errors for a request by project number name the project by that number, as AIP-2510 asks of newer APIs

use crate::shared::Shared;
use axum::body::Body;
use axum::extract::Request;
use axum::http::Uri;
use axum::response::Response;

/// A number and the id it stood for in one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub number: String,
    pub id: String,
}

fn is_number(segment: &str) -> bool {
    !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit())
}

/// Where the project segment of `path` is: the segment after the first `projects` among the
/// first three (`/compute/v1/projects/P`, `/cloudresourcemanager/v3/projects/P:getIamPolicy`),
/// as a byte range of its name (before any `:verb`).
fn project_range(path: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    let mut previous = "";
    for (index, segment) in path.split('/').enumerate() {
        if index > 4 {
            return None;
        }
        if previous == "projects" {
            let name = segment.split(':').next().unwrap_or(segment);
            return Some(offset..offset + name.len());
        }
        previous = segment;
        offset += segment.len() + 1;
    }
    None
}

/// The number a request names its project by, if any: the path's project segment, or Cloud
/// Storage's `project` parameter.
fn number_in(uri: &Uri) -> Option<String> {
    let path = uri.path();
    if let Some(range) = project_range(path) {
        let segment = &path[range];
        return is_number(segment).then(|| segment.to_string());
    }
    if path.starts_with("/storage/v1/b") {
        return uri.query().and_then(|q| {
            q.split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(k, v)| *k == "project" && is_number(v))
                .map(|(_, v)| v.to_string())
        });
    }
    None
}

/// `uri` with the project number replaced by `id`.
fn rewritten(uri: &Uri, number: &str, id: &str) -> Option<Uri> {
    let path = uri.path();
    let new_path = match project_range(path) {
        Some(range) => format!("{}{id}{}", &path[..range.start], &path[range.end..]),
        None => path.to_string(),
    };
    let query = uri.query().map(|q| {
        q.split('&')
            .map(|pair| match pair.split_once('=') {
                Some(("project", v)) if v == number => format!("project={id}"),
                _ => pair.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    let path_and_query = match query {
        Some(q) => format!("{new_path}?{q}"),
        None => new_path,
    };
    path_and_query.parse().ok()
}

/// Replaces a project number `req` names with the id of its project; returns what was replaced.
pub fn resolve(shared: &Shared, req: &mut Request) -> Option<Resolved> {
    let number = number_in(req.uri())?;
    let id = shared.read_world(|world, _| crate::iam::project_key(world, &number));
    if is_number(&id) {
        return None;
    }
    *req.uri_mut() = rewritten(req.uri(), &number, &id)?;
    Some(Resolved { number, id })
}

/// `text` with every `projects/{id}` (the whole id) naming the project `projects/{number}`.
fn echo_text(text: &str, resolved: &Resolved) -> String {
    let needle = format!("projects/{}", resolved.id);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        let end = at + needle.len();
        let whole = !rest[end..]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-');
        out.push_str(&rest[..at]);
        if whole {
            out.push_str("projects/");
            out.push_str(&resolved.number);
        } else {
            out.push_str(&needle);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// An error answer names the project as the request did (AIP-2510); other answers are kept.
pub async fn echo(response: Response, resolved: &Resolved) -> Response {
    if !(response.status().is_client_error() || response.status().is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let text = echo_text(&String::from_utf8_lossy(&bytes), resolved);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_segment_is_found_in_every_api() {
        for (path, name) in [
            ("/compute/v1/projects/123/global/networks/n", "123"),
            ("/container/v1/projects/123/locations/l/clusters", "123"),
            ("/cloudresourcemanager/v3/projects/123:getIamPolicy", "123"),
            ("/iam/v1/projects/p/serviceAccounts", "p"),
        ] {
            let range = project_range(path).expect("a project");
            assert_eq!(&path[range], name, "{path}");
        }
        assert_eq!(project_range("/storage/v1/b/projects/123"), None);
    }

    #[test]
    fn a_number_is_replaced_in_the_path_and_in_storage_project_parameter() {
        let uri: Uri = "/container/v1/projects/123/locations/l/clusters?alt=json"
            .parse()
            .unwrap();
        assert_eq!(number_in(&uri).as_deref(), Some("123"));
        assert_eq!(
            rewritten(&uri, "123", "p").unwrap(),
            "/container/v1/projects/p/locations/l/clusters?alt=json"
        );
        let uri: Uri = "/storage/v1/b?project=123&maxResults=5".parse().unwrap();
        assert_eq!(number_in(&uri).as_deref(), Some("123"));
        assert_eq!(
            rewritten(&uri, "123", "p").unwrap(),
            "/storage/v1/b?project=p&maxResults=5"
        );
        let uri: Uri = "/compute/v1/projects/p/global/networks".parse().unwrap();
        assert_eq!(number_in(&uri), None);
    }

    #[test]
    fn errors_name_the_project_as_sent() {
        let resolved = Resolved {
            number: "123".into(),
            id: "p".into(),
        };
        assert_eq!(
            echo_text(
                "Not found: projects/p/locations/l/clusters/c. (projects/p-2 is another)",
                &resolved
            ),
            "Not found: projects/123/locations/l/clusters/c. (projects/p-2 is another)"
        );
    }
}
