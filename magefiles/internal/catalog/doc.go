// Package catalog writes the operator's file-based catalog (FBC): the olm.package, the olm.channel with its
// upgrade graph (replaces and skipRange) and one olm.bundle per version, either fresh or added to an existing
// catalog directory, and assembles the catalog image on an opm base.
package catalog
