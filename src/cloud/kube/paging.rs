//! Every Kubernetes list a3ctl reads, page by page.
//!
//! An API server answers a list with `limit` in pages of at most that many objects and a
//! `metadata.continue` token for the next page; it may answer fewer objects than asked and still
//! give a token, so only an empty token ends a list
//! (<https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks>).
//! A token expires once the resource version it was cut at is compacted (about five minutes),
//! and the next page is then 410 Gone (`Expired`); client-go's pager then lists everything again
//! in one unpaged request (`ListPager.FullListIfExpired`, on by default, in
//! kubernetes/client-go@tools/pager/pager.go), and so does [`collect`].
//!
//! Pages hold [`PAGE_SIZE`] objects (client-go's pager's `defaultPageSize`, 500); the environment
//! variable `A3CTL_KUBE_PAGE_SIZE` ([`KUBE_PAGE_SIZE`]) sets another size, read
//! once when the clients are built ([`super::client::Clients::new`]): the tests read with a page
//! of one object to prove that nothing is missed.

use kube::api::{Api as KubeApi, ListParams, ObjectList};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::future::Future;

/// Objects per page unless `A3CTL_KUBE_PAGE_SIZE` says otherwise.
pub const PAGE_SIZE: u32 = 500;

/// Objects per page of every Kubernetes list a3ctl reads (default [`PAGE_SIZE`]); read once when
/// a command builds its Kubernetes clients. The tests set 1 to prove that lists are followed to
/// their last page.
pub const KUBE_PAGE_SIZE: &str = "A3CTL_KUBE_PAGE_SIZE";

/// The page size `A3CTL_KUBE_PAGE_SIZE` sets (a positive number), else [`PAGE_SIZE`].
pub fn page_size_from_env() -> u32 {
    std::env::var(KUBE_PAGE_SIZE)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(PAGE_SIZE)
}

/// Whether `error` is the API server's 410 Gone for an expired `continue` token.
fn is_expired(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 410)
}

/// Every object of a list made of pages of `page_size` that `fetch` asks for (`params` carries
/// `limit` and, after the first page, `continue`); a page that is 410 Gone makes the list start
/// over as one request without `limit` or `continue`, whose objects are the answer.
pub async fn collect<T, F, Fut>(page_size: u32, mut fetch: F) -> Result<Vec<T>, kube::Error>
where
    T: Clone,
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<ObjectList<T>, kube::Error>>,
{
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(page_size);
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        match fetch(params).await {
            Ok(page) => {
                items.extend(page.items);
                match page.metadata.continue_.filter(|t| !t.is_empty()) {
                    Some(next) => token = Some(next),
                    None => return Ok(items),
                }
            }
            Err(e) if token.is_some() && is_expired(&e) => {
                tracing::debug!("a list's continue token expired: listing it again whole");
                return fetch(ListParams::default()).await.map(|list| list.items);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Every object `api` lists, in pages of `page_size` ([`collect`]).
pub async fn list_all<K>(api: &KubeApi<K>, page_size: u32) -> Result<Vec<K>, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    collect(page_size, |params| async move { api.list(&params).await }).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::{ListMeta, Status, TypeMeta};
    use std::cell::RefCell;

    fn page(items: &[&str], next: Option<&str>) -> Result<ObjectList<String>, kube::Error> {
        Ok(ObjectList {
            types: TypeMeta::default(),
            metadata: ListMeta {
                continue_: next.map(str::to_string),
                ..ListMeta::default()
            },
            items: items.iter().map(|s| s.to_string()).collect(),
        })
    }

    fn gone() -> Result<ObjectList<String>, kube::Error> {
        Err(kube::Error::Api(Box::new(Status {
            code: 410,
            reason: "Expired".into(),
            message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
            ..Status::default()
        })))
    }

    /// The `limit` and `continue` token of one list request.
    type Asked = (Option<u32>, Option<String>);

    /// Runs [`collect`] against scripted answers; returns its result and the `(limit, continue)`
    /// of each request.
    fn run(
        page_size: u32,
        answers: Vec<Result<ObjectList<String>, kube::Error>>,
    ) -> (Result<Vec<String>, kube::Error>, Vec<Asked>) {
        let asked = RefCell::new(vec![]);
        let answers = RefCell::new(answers.into_iter());
        let result = futures_util::FutureExt::now_or_never(collect(page_size, |params| {
            asked
                .borrow_mut()
                .push((params.limit, params.continue_token.clone()));
            let answer = answers.borrow_mut().next().expect("no more answers");
            async move { answer }
        }))
        .expect("ready");
        (result, asked.into_inner())
    }

    #[test]
    fn pages_are_followed_until_the_token_is_empty() {
        let (got, asked) = run(
            1,
            vec![
                page(&["a"], Some("t1")),
                // Fewer objects than asked, with a token: not the end.
                page(&[], Some("t2")),
                page(&["c"], Some("")),
            ],
        );
        assert_eq!(got.unwrap(), ["a", "c"]);
        assert_eq!(
            asked,
            [
                (Some(1), None),
                (Some(1), Some("t1".into())),
                (Some(1), Some("t2".into()))
            ]
        );
    }

    #[test]
    fn an_expired_token_lists_everything_again_in_one_request() {
        let (got, asked) = run(
            2,
            vec![
                page(&["a", "b"], Some("t1")),
                gone(),
                page(&["a", "b", "c"], None),
            ],
        );
        assert_eq!(got.unwrap(), ["a", "b", "c"]);
        assert_eq!(
            asked,
            [(Some(2), None), (Some(2), Some("t1".into())), (None, None)]
        );
    }

    #[test]
    fn a_first_page_that_fails_is_the_error() {
        let (got, asked) = run(500, vec![gone()]);
        assert!(got.is_err());
        assert_eq!(asked.len(), 1);
    }
}
