// Package events posts Kubernetes Events about PersistentVolumeClaims, so that a warning about a StorageClass
// shows in `kubectl describe pvc`.
package events
