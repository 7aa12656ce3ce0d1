// Package aptags is the access-point tags controller of OpenShift's EFS operator: on HyperShift guest clusters
// (Infrastructure labelled hypershift.openshift.io/managed=true) it tags the access point of every EFS
// PersistentVolume with the Infrastructure's resource tags (TagResource adds or overwrites, never removes) and
// records the hash of the tags it applied in the PV annotation efs.openshift.io/access-point-tags-hash, so a PV is
// tagged again only when the tags change. Calls are rate limited (10 per second, bursts of 100); a PV that fails
// is retried by its own worker with exponential backoff (10 s up to 100 h) and a Warning event
// EFSAccessPointTagsUpdateFailed. AWS access uses the controller role: role_arn from the driver's credentials
// Secret aws-efs-cloud-credentials with the operator's own web identity token (AWS_WEB_IDENTITY_TOKEN_FILE), or
// the Secret's static keys; the Infrastructure's custom elasticfilesystem and sts endpoints are honoured.
package aptags
