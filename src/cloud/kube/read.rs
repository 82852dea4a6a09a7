//! Direct access to one cluster's objects as plain JSON values: `a3ctl verify` reads (GET and
//! LIST only), `verify --nccl-test --run` applies its test Job, waits on it and reads a pod's
//! log, and [`super::release`] applies, reads and deletes a release's objects. Same clients,
//! TLS and token rules as the adapter ([`super::client`]).

use super::client::{Clients, is_unserved};
use super::errors::classify;
use super::{FIELD_MANAGER, dynamic_api, to_value};
use crate::cloud::{CloudError, CloudResult, ErrorClass};
use kube::api::{Api as KubeApi, DeleteParams, DynamicObject, LogParams, Patch, PatchParams};
use serde_json::Value;

/// One cluster's Kubernetes API.
pub struct ClusterApi<'a> {
    clients: &'a Clients,
    client: kube::Client,
    endpoint: String,
}

impl<'a> ClusterApi<'a> {
    /// The API of the cluster at `endpoint` (host or host:port) with CA `ca` (GKE's base64 PEM;
    /// `None` reuses the CA `clients` already knows for it). Makes no request.
    pub async fn connect(
        clients: &'a Clients,
        endpoint: &str,
        ca: Option<&str>,
    ) -> CloudResult<ClusterApi<'a>> {
        let client = clients.client(endpoint, ca).await?;
        Ok(ClusterApi {
            clients,
            client,
            endpoint: endpoint.to_string(),
        })
    }

    /// The API of a kind in `namespace`; `None` when the cluster does not serve the kind.
    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> CloudResult<Option<KubeApi<DynamicObject>>> {
        match self
            .clients
            .resolve(&self.client, &self.endpoint, api_version, kind)
            .await
        {
            Ok(served) => Ok(Some(dynamic_api(self.client.clone(), &served, namespace))),
            Err(e) if is_unserved(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every object of a kind (in `namespace` for namespaced kinds), page by page
    /// ([`super::paging`]); `None` when the kind is not served.
    pub async fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> CloudResult<Option<Vec<Value>>> {
        let Some(api) = self.api(api_version, kind, namespace).await? else {
            return Ok(None);
        };
        let items = super::paging::list_all(&api, self.clients.page_size())
            .await
            .map_err(|e| classify(&e))?;
        items
            .iter()
            .map(to_value)
            .collect::<CloudResult<_>>()
            .map(Some)
    }

    /// One object; `None` when it (or its kind) does not exist.
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> CloudResult<Option<Value>> {
        let Some(api) = self.api(api_version, kind, namespace).await? else {
            return Ok(None);
        };
        match api.get_opt(name).await.map_err(|e| classify(&e))? {
            Some(object) => to_value(&object).map(Some),
            None => Ok(None),
        }
    }

    /// The versions of API group `group` the server serves, its preferred version first.
    pub async fn group_versions(&self, group: &str) -> CloudResult<Vec<String>> {
        let groups = self
            .client
            .list_api_groups()
            .await
            .map_err(|e| classify(&e))?;
        let Some(found) = groups.groups.iter().find(|g| g.name == group) else {
            return Ok(vec![]);
        };
        let preferred = found.preferred_version.as_ref().map(|p| p.version.clone());
        let mut versions: Vec<String> = preferred.iter().cloned().collect();
        versions.extend(
            found
                .versions
                .iter()
                .map(|v| v.version.clone())
                .filter(|v| Some(v) != preferred.as_ref()),
        );
        Ok(versions)
    }

    /// Server-side apply of `object` (field manager `a3ctl`, forced).
    pub async fn apply(&self, object: &Value) -> CloudResult<()> {
        // Objects come from specs (`Desired::from_spec`) or `parse_manifests`, which require both.
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let (api_version, kind) = (text(&object["apiVersion"]), text(&object["kind"]));
        let namespace = object["metadata"]["namespace"].as_str();
        let name = text(&object["metadata"]["name"]);
        let api = self
            .api(&api_version, &kind, namespace)
            .await?
            .ok_or_else(|| {
                CloudError::new(
                    ErrorClass::Invalid,
                    format!("the cluster does not serve {kind} ({api_version})"),
                )
            })?;
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(object),
        )
        .await
        .map_err(|e| {
            let mut e = classify(&e);
            e.message = format!("{kind} {name}: {}", e.message);
            e
        })?;
        Ok(())
    }

    /// Deletes an object and its dependents (background propagation); absent is fine.
    pub async fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> CloudResult<()> {
        let Some(api) = self.api(api_version, kind, namespace).await? else {
            return Ok(());
        };
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = classify(&e);
                if e.class == ErrorClass::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            }
        }
    }

    /// The log of one container of a pod.
    pub async fn logs(&self, namespace: &str, pod: &str, container: &str) -> CloudResult<String> {
        let api: KubeApi<k8s_openapi::api::core::v1::Pod> =
            KubeApi::namespaced(self.client.clone(), namespace);
        let params = LogParams {
            container: Some(container.to_string()),
            ..LogParams::default()
        };
        api.logs(pod, &params).await.map_err(|e| classify(&e))
    }
}
