//! `google.longrunning.Operation`, shared by Filestore and Artifact Registry (AIP-151).
