// Package catalog writes the operator's file-based catalog (FBC) with operator-framework/operator-registry's
// declcfg: it renders the bundle into an olm.bundle, adds it to its package (replacing each channel's head, with
// the CSV's skipRange), applies one --migrate-level across the catalog, validates the result as `opm validate`
// does and as OLM needs to resolve from it, and assembles the catalog image on an opm base (Run, `go tool mage
// catalog`, local and offline). It also renders the per-OpenShift-version catalog templates Konflux ships from the
// pushed bundle image into the committed catalogs, and says which are missing or stale (fragments.go,
// `go tool mage catalog:render`).
package catalog
