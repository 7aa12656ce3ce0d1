// Package catalog writes the operator's file-based catalog (FBC) with operator-framework/operator-registry's
// declcfg: it renders the bundle into an olm.bundle, adds it to its package and to the packages it upgrades
// (replacing each channel's head, with the CSV's skipRange), applies one --migrate-level across the catalog,
// validates the result as `opm validate` does, and assembles the catalog image on an opm base.
package catalog
