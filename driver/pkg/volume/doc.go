// Package volume parses, validates and formats the CSI volume handle and volume context of EFS volumes, in both the
// legacy (fs-…[:path[:fsap-…]]) and the typed (efs:fs-…[:path[:fsap-…]]) handle forms.
package volume
