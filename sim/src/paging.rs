//! One page of a list, for every list the simulator serves: the page size a request asks for
//! (Compute's and Cloud Storage's `maxResults`, the `pageSize` of the APIs that follow AIP-158),
//! the `pageToken` it continues from, and the `nextPageToken` of the page after it.
//!
//! Each API declares its [`Rules`] once, from its discovery document or reference:
//! - Compute: `maxResults` "Acceptable values are 0 to 500, inclusive. (Default: 500)" (the
//!   `maxResults` parameter of every list in the Compute v1 discovery document,
//!   <https://compute.googleapis.com/$discovery/rest?version=v1>), results "in alphanumerical
//!   order based on the resource name" (its `orderBy` parameter). What Compute answers for a size
//!   outside 0–500 is not published: the simulator refuses it with 400 `invalid` (a guess), and
//!   takes 0 as the default (a guess).
//! - The AIP-158 APIs (<https://google.aip.dev/158>): a size of 0 or none lets the service choose,
//!   a size above the maximum is coerced to the maximum, a negative size is `INVALID_ARGUMENT`,
//!   and a token the service did not give out is `INVALID_ARGUMENT`.
//! - Cloud Storage: `maxResults` "The service will use this parameter or 1,000 items, whichever is
//!   smaller" (`buckets.list`, `objects.list` in the storage v1 discovery document).
//!
//! Tokens are opaque to clients: URL-safe base64 of the key of the last item on the page, and the
//! next page starts after that key, so a list changed between pages neither repeats nor skips an
//! item that stayed (Google documents no such guarantee: a guess, and the behaviour a name-ordered
//! index gives). A token that does not decode is refused with the API's 400 (the text of each is a
//! guess).
//!
//! A world file may cap every page (`[lists] max_page_size`, [`crate::worldspec::ListsSpec`]): a
//! test aid that makes every client's paging run, since Google may return fewer items than asked
//! ("Fewer total results may be returned than requested", storage v1 `operations.list`; AIP-158:
//! "the API may return fewer results than the page size").

// GUESS(paging-out-of-range): Compute's answer to `maxResults` outside 0–500 (400 `invalid`), and 0 read as the default
// GUESS(paging-token-stability): a list changed between pages neither repeats nor skips what stayed; a token the simulator did not give out is 400, with guessed texts
// GUESS(paging-default-sizes): the default and maximum page sizes of Filestore, Artifact Registry and the AIP-151 operations lists
use crate::error::{GcpError, GcpResult};
use crate::http::Query;
use crate::shared::Shared;
use base64::Engine;

/// How one API pages its lists.
#[derive(Clone, Copy)]
pub struct Rules {
    /// The size parameter: `maxResults` or `pageSize`.
    pub size_param: &'static str,
    /// The size when none (or 0) is asked for.
    pub default: usize,
    /// The largest page.
    pub max: usize,
    /// What a size above [`Rules::max`] gets: `None` coerces it to the maximum, `Some` refuses it
    /// with this error.
    pub too_large: Option<fn(&str) -> GcpError>,
    /// The error for a size that is not a non-negative integer.
    pub bad_size: fn(&str) -> GcpError,
    /// The error for a token this simulator did not give out.
    pub bad_token: fn(&str) -> GcpError,
}

/// The rules of an AIP-158 API with this default and maximum page size: a larger size is coerced
/// to the maximum; a size that is no integer or a foreign token is 400 `INVALID_ARGUMENT` (the
/// texts are guesses, after the proto-JSON parser's `Invalid value at 'page_size' (TYPE_INT32)`).
pub const fn aip158(default: usize, max: usize) -> Rules {
    Rules {
        size_param: "pageSize",
        default,
        max,
        too_large: None,
        bad_size: |raw| {
            GcpError::invalid(format!(
                "Invalid value at 'page_size' (TYPE_INT32), \"{raw}\""
            ))
        },
        bad_token: |token| GcpError::invalid(format!("Invalid page token \"{token}\".")),
    }
}

/// One page: its items, in key order, and the token of the next page if more remain.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

/// The cap on every page that the world file sets (`[lists] max_page_size`), if any.
pub fn cap(shared: &Shared) -> Option<usize> {
    shared
        .config
        .world
        .lists
        .as_ref()
        .and_then(|l| l.max_page_size)
        .map(std::num::NonZeroUsize::get)
}

/// The token that continues after the item whose key is `key`.
pub fn token(key: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key)
}

/// The key a token continues after, if it is one this module gave out.
fn key_of(token: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The page size a request asks for under `rules`, capped by `cap`.
pub fn size(rules: &Rules, query: &Query, cap: Option<usize>) -> GcpResult<usize> {
    let asked = match query.get(rules.size_param).map(str::trim) {
        None | Some("") => rules.default,
        Some(raw) => match raw.parse::<i64>() {
            Ok(0) => rules.default,
            Ok(n) if n < 0 => return Err((rules.bad_size)(raw)),
            Ok(n) if n as u64 > rules.max as u64 => match rules.too_large {
                Some(refuse) => return Err(refuse(raw)),
                None => rules.max,
            },
            Ok(n) => n as usize,
            Err(_) => return Err((rules.bad_size)(raw)),
        },
    };
    Ok(cap.map_or(asked, |cap| asked.min(cap.max(1))))
}

/// One page of `items` (each with its key; put in key order here) as `query` asks for it.
pub fn page<T>(
    rules: &Rules,
    query: &Query,
    cap: Option<usize>,
    mut items: Vec<(String, T)>,
) -> GcpResult<Page<T>> {
    let size = size(rules, query, cap)?;
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let after = match query.get("pageToken").filter(|t| !t.is_empty()) {
        None => None,
        Some(given) => Some(key_of(given).ok_or_else(|| (rules.bad_token)(given))?),
    };
    let start = match &after {
        None => 0,
        Some(after) => items.partition_point(|(key, _)| key.as_str() <= after.as_str()),
    };
    let rest = items.len() - start;
    let mut taken: Vec<(String, T)> = items.into_iter().skip(start).take(size).collect();
    let next = if rest > size {
        taken.last().map(|(key, _)| token(key))
    } else {
        None
    };
    Ok(Page {
        items: taken.drain(..).map(|(_, item)| item).collect(),
        next,
    })
}

/// A key that orders by number (operation sequence numbers, list positions).
pub fn numbered(n: u64) -> String {
    format!("{n:020}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            size_param: "maxResults",
            default: 500,
            max: 500,
            too_large: Some(|raw| GcpError::invalid(format!("too large {raw}"))),
            bad_size: |raw| GcpError::invalid(format!("bad size {raw}")),
            bad_token: |raw| GcpError::invalid(format!("bad token {raw}")),
        }
    }

    fn query(pairs: &[(&str, &str)]) -> Query {
        Query(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn named(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| (n.to_string(), n.to_string()))
            .collect()
    }

    #[test]
    fn pages_follow_their_tokens_to_the_end() {
        let all = named(&["c", "a", "b"]);
        let first = page(&rules(), &query(&[("maxResults", "2")]), None, all.clone()).unwrap();
        assert_eq!(first.items, ["a", "b"]);
        let next = first.next.expect("a second page");
        let second = page(
            &rules(),
            &query(&[("maxResults", "2"), ("pageToken", &next)]),
            None,
            all,
        )
        .unwrap();
        assert_eq!(second.items, ["c"]);
        assert!(second.next.is_none());
    }

    #[test]
    fn a_list_changed_between_pages_neither_repeats_nor_skips() {
        let first = page(
            &rules(),
            &query(&[("maxResults", "2")]),
            None,
            named(&["a", "b", "d"]),
        )
        .unwrap();
        let next = first.next.unwrap();
        // `b` deleted, `c` made since the first page.
        let second = page(
            &rules(),
            &query(&[("pageToken", &next)]),
            None,
            named(&["a", "c", "d"]),
        )
        .unwrap();
        assert_eq!(second.items, ["c", "d"]);
    }

    #[test]
    fn sizes_are_checked_and_capped() {
        let q = |v: &str| query(&[("maxResults", v)]);
        assert_eq!(size(&rules(), &q("0"), None).unwrap(), 500);
        assert_eq!(size(&rules(), &q("500"), None).unwrap(), 500);
        assert_eq!(size(&rules(), &q("7"), Some(1)).unwrap(), 1);
        assert_eq!(size(&rules(), &query(&[]), Some(3)).unwrap(), 3);
        assert!(size(&rules(), &q("501"), None).is_err());
        assert!(size(&rules(), &q("-1"), None).is_err());
        assert!(size(&rules(), &q("x"), None).is_err());
        let coerce = Rules {
            too_large: None,
            ..rules()
        };
        assert_eq!(size(&coerce, &q("9999"), None).unwrap(), 500);
    }

    #[test]
    fn a_garbled_token_is_refused() {
        let err = page(
            &rules(),
            &query(&[("pageToken", "not base64!")]),
            None,
            named(&["a"]),
        )
        .unwrap_err();
        assert_eq!(err.code, 400);
    }
}
