// Package efslayout reads efs-utils/layout.json, the one description of where each efs-utils file is installed,
// and expands it into the entries of the efs-utils image layer.
package efslayout
