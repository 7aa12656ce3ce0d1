// Package wheelinstall installs a pure-Python wheel into the entries of an image layer the way the wheel
// specification (PEP 427, PEP 376, PEP 491) says an installer must: verify the wheel's RECORD, spread the .data
// directories over the scheme, make console scripts, and write a .dist-info with a fresh RECORD and INSTALLER.
package wheelinstall
