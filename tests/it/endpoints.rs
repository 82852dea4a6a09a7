//! The `A3CTL_*_ENDPOINT` variables: all nine Google API endpoints are overridden or none. A
//! partial set is refused before any call, naming what would have gone where (before, the APIs
//! left out went silently to Google).

use crate::common;

use common::TestContext;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_set_of_endpoints_is_refused_before_any_call() {
    let cx = TestContext::new().await;
    let out = cx
        .command(&["plan", "blueprints/minimal.toml"])
        .env_remove("A3CTL_CLOUDQUOTAS_ENDPOINT")
        .env_remove("A3CTL_IAM_ENDPOINT")
        .env_remove("A3CTL_RESOURCEMANAGER_ENDPOINT")
        .output()
        .await
        .unwrap();
    let run = common::Run::from(out);
    let run = run.expect(1);
    assert!(
        run.stderr
            .contains("Some Google API endpoints are overridden and others are not"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("6 of the 9 API endpoint variables are set"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "the other 3 would go to Google: A3CTL_CLOUDQUOTAS_ENDPOINT, A3CTL_IAM_ENDPOINT, \
             A3CTL_RESOURCEMANAGER_ENDPOINT"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("A3CTL_IAM_ENDPOINT=https://iam.googleapis.com"),
        "{}",
        run.stderr
    );
    assert_eq!(common::request_log(&cx).await.len(), 0);
}
