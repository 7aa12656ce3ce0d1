// Package presence starts and stops the driver's controllers as the ClusterCSIDriver efs.csi.aws.com comes and
// goes, reports its absence as a metric that the shipped PrometheusRule turns into an info alert, and keeps the
// operator's own monitoring objects applied whether or not the driver is installed.
package presence
