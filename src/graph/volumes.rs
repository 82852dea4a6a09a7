//! Shared storage as Kubernetes volumes: a PersistentVolume and a bound PersistentVolumeClaim
//! (namespace `default`) for the blueprint's Filestore share, through the Filestore CSI driver,
//! and for every bucket mounted with GCS FUSE, through the GCS FUSE CSI driver. The cluster spec
//! turns both CSI add-ons on when they are needed (graph/build.rs).
//!
//! The Filestore volume names the instance's IP address, known only once the instance exists: the
//! spec carries the reference `${filestore.shared.ip_address}`, which the Kubernetes adapter
//! resolves from the recorded outputs of the resources the object depends on.

use super::software::{Context, WithDependency};
use crate::resource::{Addr, Desired, Kind};
use serde_json::{Value, json};

/// The Filestore CSI driver.
pub const FILESTORE_DRIVER: &str = "filestore.csi.storage.gke.io";
/// The GCS FUSE CSI driver.
pub const GCSFUSE_DRIVER: &str = "gcsfuse.csi.storage.gke.io";
/// Where the claims live.
pub const NAMESPACE: &str = "default";

/// The name of the Filestore volume and claim.
pub fn filestore_volume(blueprint: &str) -> String {
    format!("{blueprint}-filestore")
}

/// The name of a bucket's volume and claim (bucket names may hold `_` and `.`, volume names not
/// `_`).
pub fn bucket_volume(bucket: &str) -> String {
    format!("gcs-{}", bucket.replace('_', "-"))
}

pub(super) fn resources(cx: &Context, out: &mut Vec<Desired>) {
    let bp = cx.bp;
    if let Some(fs) = &bp.filestore {
        let instance = format!("{}-fs", bp.name);
        let filestore = Addr::new(Kind::Filestore, "shared");
        let csi = json!({
            "driver": FILESTORE_DRIVER,
            "volumeHandle": format!("modeInstance/{}/{instance}/{}", fs.location, fs.share),
            "volumeAttributes": {"ip": format!("${{{filestore}.ip_address}}"), "volume": fs.share},
        });
        let size = format!("{}Gi", fs.capacity_gb);
        shared_volume(
            cx,
            out,
            &filestore_volume(&bp.name),
            &size,
            csi,
            None,
            filestore,
        );
    }
    for bucket in bp.buckets.iter().filter(|b| b.mount) {
        // Hierarchical-namespace buckets have real folders; flat ones need `implicit-dirs` to
        // show the directories their object names imply.
        let options: Vec<&str> = if bucket.hierarchical_namespace {
            vec![]
        } else {
            vec!["implicit-dirs"]
        };
        let csi = json!({"driver": GCSFUSE_DRIVER, "volumeHandle": bucket.name});
        shared_volume(
            cx,
            out,
            &bucket_volume(&bucket.name),
            "5Ti",
            csi,
            Some(json!(options)),
            Addr::new(Kind::Bucket, bucket.name.clone()),
        );
    }
}

/// A `ReadWriteMany` PersistentVolume `name` on the CSI source `csi`, depending on `backing`,
/// and its claim.
fn shared_volume(
    cx: &Context,
    out: &mut Vec<Desired>,
    name: &str,
    size: &str,
    csi: Value,
    mount_options: Option<Value>,
    backing: Addr,
) {
    let mut spec = json!({
        "storageClassName": "",
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteMany"],
        "persistentVolumeReclaimPolicy": "Retain",
        "volumeMode": "Filesystem",
        "csi": csi,
    });
    if let Some(options) = mount_options {
        spec["mountOptions"] = options;
    }
    let volume = cx
        .object("v1", "PersistentVolume", None, name, json!({"spec": spec}))
        .with_dependency(backing);
    let volume_addr = volume.addr.clone();
    out.push(volume);
    out.push(claim(cx, name, size, volume_addr));
}

/// A claim in `default` bound to the volume `name`, waited for `Bound`.
fn claim(cx: &Context, name: &str, size: &str, volume: Addr) -> Desired {
    cx.object(
        "v1",
        "PersistentVolumeClaim",
        Some(NAMESPACE),
        name,
        json!({"spec": {
            "storageClassName": "",
            "volumeName": name,
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": size}},
        }}),
    )
    .with_dependency(volume)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::graph::ResourceGraph;

    #[test]
    fn filestore_and_mounted_buckets_get_a_volume_and_a_claim() {
        let bp = shipped("a3-mega.toml");
        let g = ResourceGraph::from_blueprint(&bp).unwrap();
        let pv = g
            .get(&"k8s.persistentvolume/-/a3mega-filestore".parse().unwrap())
            .unwrap();
        let csi = &pv.spec["object"]["spec"]["csi"];
        assert_eq!(csi["driver"], FILESTORE_DRIVER);
        assert_eq!(
            csi["volumeHandle"],
            "modeInstance/us-central1-a/a3mega-fs/nfsshare"
        );
        assert_eq!(
            csi["volumeAttributes"]["ip"],
            "${filestore.shared.ip_address}"
        );
        assert!(
            pv.dependencies
                .contains(&Addr::new(Kind::Filestore, "shared"))
        );
        assert_eq!(pv.spec["object"]["spec"]["capacity"]["storage"], "2560Gi");
        let pvc = g
            .get(
                &"k8s.persistentvolumeclaim/default/a3mega-filestore"
                    .parse()
                    .unwrap(),
            )
            .unwrap();
        assert_eq!(pvc.spec["object"]["spec"]["volumeName"], "a3mega-filestore");
        let bucket = &bp.buckets[0];
        let name = bucket_volume(&bucket.name);
        let gcs = g
            .get(&format!("k8s.persistentvolume/-/{name}").parse().unwrap())
            .unwrap();
        assert_eq!(
            gcs.spec["object"]["spec"]["csi"]["volumeHandle"],
            bucket.name.as_str()
        );
        assert!(
            g.get(
                &format!("k8s.persistentvolumeclaim/default/{name}")
                    .parse()
                    .unwrap()
            )
            .is_some()
        );
        assert_eq!(bucket_volume("a_b.c"), "gcs-a-b.c");
    }
}
