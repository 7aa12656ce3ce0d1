// Package assets embeds the YAML manifests the operator applies: the driver's objects (driver/), the operator's own
// monitoring objects that exist whether or not the driver is installed (operator/), and the CustomResourceDefinitions
// it serves (crds/). The files are written by hand and committed; every placeholder they use is listed in
// Placeholders and filled by Render.
package assets
