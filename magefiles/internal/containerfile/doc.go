// Package containerfile parses the Containerfiles under images/ into stages and instructions, so tests can hold
// them and the mage assembly to the same file layout, entrypoint, user and labels.
package containerfile
