//! Cloud Storage buckets, over the JSON API with reqwest. (Skeleton: the adapter is being written.)

use super::{Adapter, GcpConfig};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Settle, Started, Target, UpdateStep,
};
use crate::plan::FieldDiff;
use crate::resource::Observed;
use crate::state::OperationRef;

pub struct StorageAdapter {}

impl StorageAdapter {
    pub async fn new(_config: &GcpConfig) -> CloudResult<StorageAdapter> {
        Ok(StorageAdapter {})
    }
}

fn unsupported() -> CloudError {
    CloudError::new(ErrorClass::Other, "this resource kind is not supported yet")
}

#[async_trait::async_trait]
impl Adapter for StorageAdapter {
    async fn read(&self, _target: &Target) -> CloudResult<Option<Observed>> {
        Err(unsupported())
    }
    async fn create(&self, _target: &Target) -> CloudResult<Started> {
        Err(unsupported())
    }
    fn update_steps(&self, _target: &Target, _diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        vec![]
    }
    async fn update(&self, _target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        Err(unsupported())
    }
    async fn delete(&self, _target: &Target) -> CloudResult<Started> {
        Err(unsupported())
    }
    async fn poll(&self, _operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(unsupported())
    }
    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}
